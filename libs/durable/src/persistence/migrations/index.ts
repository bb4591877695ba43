import { InitialSchema1732900000000 } from './1732900000000-initial-schema';
import { Operations1732900000001 } from './1732900000001-operations';
import { Stats1732900000002 } from './1732900000002-stats';
import { WaitKinds1732900000003 } from './1732900000003-wait-kinds';
import { DelayedStart1732900000004 } from './1732900000004-delayed-start';
import { Schedules1732900000005 } from './1732900000005-schedules';
import { Queues1732900000006 } from './1732900000006-queues';
import { Select1732900000007 } from './1732900000007-select';
import { RunDeadlines1732900000008 } from './1732900000008-run-deadlines';
import { BusinessKeys1732900000009 } from './1732900000009-business-keys';
import { ForkAndVersions1732900000010 } from './1732900000010-fork-and-versions';
import { TimeRanges1732900000011 } from './1732900000011-time-ranges';
import { QueueSlots1732900000012 } from './1732900000012-queue-slots';
import { PartitionedJournal1732900000013 } from './1732900000013-partitioned-journal';
import { QueueSlotBatches1732900000014 } from './1732900000014-queue-slot-batches';
import { BatchedJournalReads1732900000015 } from './1732900000015-batched-journal-reads';
import { RunStatistics1732900000016 } from './1732900000016-run-statistics';
import { QueueSlotHolders1732900000017 } from './1732900000017-queue-slot-holders';
import { ListedStatus1732900000018 } from './1732900000018-listed-status';
import { UnkeyedPending1732900000019 } from './1732900000019-unkeyed-pending';
import { KeyFormat1732900000020 } from './1732900000020-key-format';
import { JournalPartitionVacuum1732900000021 } from './1732900000021-journal-partition-vacuum';
import { RetentionByStatus1732900000022 } from './1732900000022-retention-by-status';
import { UnbegunDeadline1732900000023 } from './1732900000023-unbegun-deadline';
import { BeganBeforeQueues1732900000024 } from './1732900000024-began-before-queues';
import { BegunPendingDeadline1732900000025 } from './1732900000025-begun-pending-deadline';

/** Every migration of the library, oldest first. */
export const DURABLE_MIGRATIONS = [
  InitialSchema1732900000000,
  Operations1732900000001,
  Stats1732900000002,
  WaitKinds1732900000003,
  DelayedStart1732900000004,
  Schedules1732900000005,
  Queues1732900000006,
  Select1732900000007,
  RunDeadlines1732900000008,
  BusinessKeys1732900000009,
  ForkAndVersions1732900000010,
  TimeRanges1732900000011,
  QueueSlots1732900000012,
  PartitionedJournal1732900000013,
  QueueSlotBatches1732900000014,
  BatchedJournalReads1732900000015,
  RunStatistics1732900000016,
  QueueSlotHolders1732900000017,
  ListedStatus1732900000018,
  UnkeyedPending1732900000019,
  KeyFormat1732900000020,
  JournalPartitionVacuum1732900000021,
  RetentionByStatus1732900000022,
  UnbegunDeadline1732900000023,
  BeganBeforeQueues1732900000024,
  BegunPendingDeadline1732900000025,
];
