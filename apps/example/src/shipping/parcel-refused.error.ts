import { NonRetryableError } from 'nestjs-durable';

/**
 * The carrier will not take the parcel: no retry changes that (a NonRetryableError). Its name reaches
 * the order's run in ChildWorkflowFailedError's `childError`, which tells it apart from other failures.
 */
export class ParcelRefusedError extends NonRetryableError {}
