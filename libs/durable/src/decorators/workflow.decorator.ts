import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import { WORKFLOW_METADATA } from '../durable.constants';
import type { WorkflowOptions } from '../interfaces';

export interface WorkflowMetadata {
  name?: string;
  options: WorkflowOptions;
}

/**
 * Declares a workflow: a provider whose `run(input, ctx)` is executed durably. List the class in a
 * module's `providers`. The name (default: the class name) is stored with every run: keep it stable.
 */
export function Workflow(name?: string, options: WorkflowOptions = {}): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(WORKFLOW_METADATA, { name, options } satisfies WorkflowMetadata));
}
