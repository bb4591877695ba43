import { historyEntity } from './history.entity';
import { instanceEntity } from './instance.entity';
import { messageEntity } from './message.entity';
import { queueSlotEntity } from './queue-slot.entity';
import { runEntity } from './run.entity';
import { scheduleEntity, scheduleSkipEntity } from './schedule.entity';
import { signalEntity } from './signal.entity';
import { stepEntity } from './step.entity';

export * from './history.entity';
export * from './instance.entity';
export * from './message.entity';
export * from './queue-slot.entity';
export * from './run.entity';
export * from './schedule.entity';
export * from './signal.entity';
export * from './step.entity';

/** The library's entities for one Postgres schema (the schema is an option, so entities are made per schema). */
export const durableEntities = (schema: string) => [
  runEntity(schema),
  stepEntity(schema),
  signalEntity(schema),
  messageEntity(schema),
  historyEntity(schema),
  instanceEntity(schema),
  scheduleEntity(schema),
  scheduleSkipEntity(schema),
  queueSlotEntity(schema),
];
