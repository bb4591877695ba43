// What docs/architecture.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { WaitKindDeclaration } from 'nestjs-durable/wait-kinds/wait-kind.registry';

export type { ErrorInfo } from 'nestjs-durable';
export type { SelectArmReason } from 'nestjs-durable/wait-kinds/wait-kind.registry';

/** The registry's helper: a declaration typed by its reason's shape. */
export declare const declare: <R extends object>(declaration: WaitKindDeclaration<R>) => WaitKindDeclaration<R>;

/** The library's registry, which the doc's shows (the block assigns its own to it). */
export { WAIT_KINDS as LIBRARY_WAIT_KINDS } from 'nestjs-durable/wait-kinds/wait-kind.registry';
