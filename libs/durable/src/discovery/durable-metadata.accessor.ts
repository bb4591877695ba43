import { Injectable, Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { STEP_METADATA, WORKFLOW_METADATA } from '../durable.constants';
import type { StepMetadata } from '../decorators/step.decorator';
import type { WorkflowMetadata } from '../decorators/workflow.decorator';

/** Reads what @Workflow and @Step stored. */
@Injectable()
export class DurableMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  workflow(target: Type<unknown> | Function): WorkflowMetadata | undefined {
    return this.reflector.get<WorkflowMetadata>(WORKFLOW_METADATA, target);
  }

  step(method: Function): StepMetadata | undefined {
    return this.reflector.get<StepMetadata>(STEP_METADATA, method);
  }
}
