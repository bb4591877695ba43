// The shapes of docs/rest-api.md, as the browser receives them (times are ISO strings). The wait
// kinds come from the library's registry itself: it imports nothing, so the bundle takes it as is.
import { WAIT_KIND_NAMES, WAIT_KINDS } from '../../../../libs/durable/src/wait-kinds/wait-kind.registry';
import type { WaitKind, WaitReason as StoredWaitReason } from '../../../../libs/durable/src/wait-kinds/wait-kind.registry';

export type RunStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export const RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];

export interface ErrorInfo {
  name: string;
  message: string;
  /** The stack the workflow's code threw with, capped at 4,000 characters by the server. */
  stack?: string;
  /** The key of the step the error came out of (a run's error). */
  step?: string;
}

type OnTheWire<V> = V extends Date
  ? string
  : V extends readonly (infer E)[]
    ? OnTheWire<E>[]
    : V extends object
      ? { [F in keyof V]: OnTheWire<V[F]> }
      : V;

/** Why a run waits, from the library's registry of wait kinds (its times as ISO strings). */
export type WaitReason = StoredWaitReason extends infer W
  ? W extends StoredWaitReason
    ? { [F in keyof W]: OnTheWire<W[F]> }
    : never
  : never;
export type { WaitKind };
/** The wait kinds, in the registry's order, and their declarations (label, subject, instants). */
export { WAIT_KIND_NAMES as WAIT_KINDS, WAIT_KINDS as WAIT_KIND_DECLARATIONS };

/** A run's business keys: names to values, what the run is about (an order, a customer). */
export type BusinessKeys = Record<string, string>;

export interface Run {
  runId: string;
  workflow: string;
  status: RunStatus;
  input: unknown;
  output?: unknown;
  error?: ErrorInfo;
  waiting?: WaitReason;
  attempt: number;
  maxAttempts?: number;
  parentRunId?: string;
  queue?: string;
  partitionKey?: string;
  priority?: number;
  /** The instant the run must end by; absent: none (or a queued run's timeout, not started yet). */
  deadline?: string;
  /** A child started with `{ detached: true }`: neither its parent's deadline nor its cancel reach it. */
  detached?: true;
  /** Absent: none. */
  keys?: BusinessKeys;
  /** The run this one was forked from. */
  forkedFrom?: string;
  /** When it first began executing (a queued run: when admitted). */
  beganAt?: string;
  /** A debounced start's key; `startsBy` (its maxDelay's cap) until it begins. */
  debounce?: { key: string; startsBy?: string };
  /** The application's version when the run was created. */
  appVersion?: string;
  warning?: RunWarning;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
}

/** Checkpoints an earlier execution recorded that the current code did not reach before it parked again. */
export interface RunWarning {
  code: 'UNREACHED_CHECKPOINTS';
  message: string;
  keys: string[];
  at: string;
}

/** Query of GET /runs; `status` may list several statuses, comma-separated. */
export interface RunFilter {
  status?: string;
  workflow?: string;
  waitingFor?: WaitKind;
  signal?: string;
  /** Runs started by this schedule (its slots, triggers and backfills). */
  schedule?: string;
  /** Runs of this queue. */
  queue?: string;
  /** The forks of this run. */
  forkedFrom?: string;
  /** Runs having every one of these keys (sent as `key.<name>=<value>`). */
  keys?: BusinessKeys;
  /** Created or last changed in a range: ISO-8601 instants, `…After` inclusive, `…Before` exclusive. */
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  q?: string;
  limit?: number;
  cursor?: string;
  /** By creation (default) or last change, newest (default) or oldest first. */
  sort?: RunSort;
  order?: 'desc' | 'asc';
}

export type RunSort = 'created' | 'updated';

/** What a bulk action by filter matches: the list's filter without the id prefix, the paging and the order. */
export type BulkFilter = Omit<RunFilter, 'q' | 'limit' | 'cursor' | 'sort' | 'order'>;

export interface RunList {
  runs: Run[];
  nextCursor?: string;
  /** Every match of the filter: exact up to 10,000, then the planner's estimate. */
  total?: { count: number; estimated: boolean };
}

export interface JournalStep {
  key: string;
  /** `deadline-passed`: where the run's deadline passed (an error outcome, DeadlineExceededError). */
  kind: 'step' | 'sleep' | 'deadline' | 'timeout' | 'child' | 'child-result' | 'deadline-passed' | 'select' | 'patch' | 'set-keys';
  outcome: 'ok' | 'error';
  result?: unknown;
  error?: ErrorInfo;
  startedAt?: string;
  finishedAt: string;
  durationMs?: number;
}

export interface ReceivedSignal {
  name: string;
  payload: unknown;
  deliveredAt: string;
  source: string | null;
}

export interface PendingSignal {
  name: string;
  awaited: boolean;
  jsonSchema?: JsonSchemaObject;
}

export interface ChannelMessage {
  channel: string;
  key: string;
  seq: number;
  payload: unknown;
  sentAt: string;
  ackedAt: string | null;
}

export interface RunSummary {
  runId: string;
  workflow: string;
  status: RunStatus;
}

export interface ChildRun extends RunSummary {
  step: string | null;
  /** A fork's child spawned before its fromStep: the run that started it (the source), whose child the fork reuses. */
  reusedFrom: string | null;
  /** Started with `{ detached: true }`: the parent's cancel and deadline do not reach it. */
  detached?: true;
}

export interface HistoryEntry {
  id: string;
  at: string;
  event: string;
  actor: string;
  detail: unknown;
}

/** The detail of a `deadline-set` event: the deadline before and after (absent: none); a child's row names the run it followed. */
export interface DeadlineSetDetail {
  from?: string;
  to?: string;
  inheritedFrom?: string;
}

/** The detail of a `forked` event, on the source. */
export interface ForkedDetail {
  fork: string;
  fromStep: string;
}

/** The detail of a `forked-from` event, on the fork: what was copied from the source. */
export interface ForkedFromDetail {
  source: string;
  fromStep: string;
  signals: SignalPolicy;
  copiedSteps: number;
  copiedSignals: number;
  copiedMessages: number;
  inputOverridden: boolean;
}

export interface RunDetail {
  run: Run;
  steps: JournalStep[];
  signals: ReceivedSignal[];
  pendingSignals: PendingSignal[];
  messages: ChannelMessage[];
  children: ChildRun[];
  parent: RunSummary | null;
  /** The runs forked from this one, oldest first. */
  forks: string[];
  /** The newest 500 events, oldest first; `historyMore`: there are earlier ones (GET /runs/:id/history). */
  history: HistoryEntry[];
  historyMore: boolean;
}

/** An earlier page of a run's history, oldest first; `historyMore`: there are earlier ones still. */
export interface HistoryPage {
  history: HistoryEntry[];
  historyMore: boolean;
}

export interface StartRunBody {
  workflow: string;
  input: unknown;
  runId?: string;
  /** A delayed start: milliseconds or text such as '5m' (the server checks it). */
  delay?: string | number;
  /** A delayed start at an instant (ISO-8601); not with `delay`. */
  startAt?: string;
  /** The run's deadline, this long after it begins: milliseconds or text such as '2h'; the workflow's timeout otherwise. */
  timeout?: string | number;
  keys?: BusinessKeys;
}

export interface StartRunResult {
  runId: string;
  created: boolean;
}

export interface SignalDelivery {
  runId: string;
  name: string;
  accepted: boolean;
  deliveredAt: string;
}

export interface MessageDelivery {
  runId: string;
  channel: string;
  key: string;
  accepted: boolean;
  seq: number;
}

export interface TransitionResult {
  runId: string;
  status: RunStatus;
}

/** POST /runs/:id/resume: whether the run was made due now, `resumed` recorded (false: it was on its way already, nothing changed). */
export interface ResumeResult extends TransitionResult {
  resumed: boolean;
}

/** Which signals and messages a fork copies: those delivered before its step, or all of them. */
export type SignalPolicy = 'before' | 'all';

/** POST /runs/:id/fork (the dashboard sends no `runId` nor `input`: the fork takes a new id and the source's input). */
export interface ForkBody {
  fromStep: string;
  signals: SignalPolicy;
}

export interface ForkResult {
  runId: string;
  forkedFrom: string;
}

/** POST /runs/:id/deadline: the run's deadline as stored now (null: none). */
export interface DeadlineResult extends TransitionResult {
  deadline: string | null;
}

export interface Outcome {
  runId: string;
  /** `unchanged`: a resume that found nothing to end. */
  outcome: 'accepted' | 'duplicate' | 'unchanged' | 'refused';
  code?: string;
  message?: string;
}

export interface BulkResult {
  results: Outcome[];
}

/** A JSON Schema as the server sends it; lib/json-schema.ts validates payloads against it. */
export type JsonSchemaObject = Record<string, unknown>;

export interface DeclaredName {
  name: string;
  jsonSchema?: JsonSchemaObject;
}

export interface WorkflowInfo {
  name: string;
  retry: { maxAttempts: number };
  /** The queue its runs wait in; null: none. */
  queue: string | null;
  /** Its `@Workflow` timeout: the deadline a run started without one runs under; null: none. */
  timeoutMs: number | null;
  /** How long a run goes on past its deadline before it is failed. */
  deadlineGraceMs: number;
  /** `null`: the workflow accepts any name. */
  signals: DeclaredName[] | null;
  channels: DeclaredName[] | null;
}

export interface Instance {
  id: string;
  startedAt: string;
  heartbeatAt: string;
  lastSweepAt: string | null;
  alive: boolean;
  leases: number;
  detail: unknown;
}

/** GET /journal: the journal's partitions by day (the UTC day their runs were created), newest first. */
export interface JournalDays {
  today: string;
  /** Whether this instance runs retention, which drops a day once none of its runs is left. */
  retention: boolean;
  /** The history rows that are no run's (a schedule's audit trail): never dropped. */
  standingBytes: number;
  days: JournalDay[];
}

export interface JournalDay {
  day: string;
  /** The days before the journal was partitioned, as one partition. */
  legacy: boolean;
  bytes: number;
  /** The runs of the day left, counted up to 10,000 (`atLeast`: there may be more). */
  runs: { count: number; atLeast: boolean };
  state: 'ahead' | 'recent' | 'held' | 'drops';
}

export interface Stats {
  byStatus: Record<RunStatus, number>;
  waitingByKind: Record<WaitKind, number>;
  oldestWaiting: { runId: string; workflow: string; since: string; waiting: WaitReason } | null;
  overdue: { count: number; oldestDueAt: string | null };
  /** The figures that are the planner's estimates (counts past 10,000) rather than exact counts. */
  estimated: { byStatus: RunStatus[]; waitingByKind: WaitKind[]; overdue: boolean };
  instances: Instance[];
  lastSweepAt: string | null;
  now: string;
}

/** Why a slot started no run (docs/API.md section 7). */
export type SkipReason = 'overlap' | 'missed' | 'paused';

/** A run a schedule started, as the schedule knows it. */
export interface ScheduledRun {
  runId: string;
  status: RunStatus;
  scheduledAt: string;
}

/** A schedule, as GET /schedules lists it (`ScheduleView` of docs/API.md section 7). */
export interface Schedule {
  name: string;
  workflow: string;
  cron: string;
  /** IANA zone the cron is read in. */
  timezone: string;
  overlap: 'skip' | 'bufferOne' | 'allow' | 'cancelOther';
  /** After downtime, missed slots younger than this (ms) may still run. */
  catchupWindow: number;
  /** Which of the slots inside the window run: the newest, or all. */
  catchup: 'latest' | 'all';
  /** Each slot's run starts up to this (ms) later, before the next slot. */
  jitter: number;
  paused: boolean;
  source: 'decorator' | 'api';
  /** No live instance executes its workflow: held until one does (`paused` reads true meanwhile). */
  workflowMissing: boolean;
  /** An operator's pause, held or not: whether it stays paused once its workflow is back. */
  operatorPaused: boolean;
  /** The next 5 slots, UTC instants. */
  nextFireTimes: string[];
  lastRun?: ScheduledRun;
  skippedCount: number;
}

/** A slot that started no run, and when that was decided. */
export interface SkippedSlot {
  slot: string;
  reason: SkipReason;
  at: string;
}

/** GET /schedules/:name: the schedule, its recent runs and its skipped slots, newest first. */
export interface ScheduleDetail {
  schedule: Schedule;
  runs: Run[];
  skipped: SkippedSlot[];
}

/** POST /schedules/:name/backfill; with `dryRun` the server only counts. */
export interface BackfillBody {
  from: string;
  to: string;
  dryRun?: boolean;
}

/** How many slots of the range start a run, and how many do not (their run exists already). */
export interface BackfillResult {
  started: number;
  skipped: number;
}

/** A dry run's answer: also how many slots the range holds, and the first and last of them (ISO-8601). */
export interface BackfillPreview extends BackfillResult {
  slots: number;
  first?: string;
  last?: string;
}

export interface Session {
  auth: 'guard' | 'token' | 'none';
  readOnly: boolean;
  actor: string | null;
  /** Whether this request's credentials passed (the server sends it; not yet in docs/rest-api.md). */
  authenticated?: boolean;
}

/** The error body of every failed request. */
export interface ApiErrorBody {
  code: string;
  message: string;
  details?: unknown;
}

export interface PayloadIssue {
  path: string;
  message: string;
}

/** One queue of GET /queues. */
export interface Queue {
  name: string;
  concurrency: number | null;
  partitionConcurrency: number | null;
  rateLimit: { limit: number; periodMs: number } | null;
  running: number;
  pending: { concurrency: number; partition: number; rate: number };
  partitions: Array<{ key: string; running: number; pending: number }>;
  rateWindowUsed: number | null;
}

/** GET /queues: the declared queues, and the queues not declared here that hold pending runs (a deploy removed them). */
export interface Queues {
  queues: Queue[];
  /** `pending` counted up to 10,000 (`atLeast` past it). */
  undeclared: Array<{ name: string; pending: number; atLeast: boolean }>;
}
