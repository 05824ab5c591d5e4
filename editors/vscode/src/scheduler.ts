/**
 * Search-as-you-type scheduling for the QuickPick: wait `delayMs` after the last keystroke, cancel
 * the search that is still running when a newer one starts, and deliver only the newest answer.
 * Pure (timers and promises only) so it is tested under Node without VS Code.
 */

/** Cancels one in-flight search; the extension maps it to a CancellationTokenSource. */
export interface Cancellable {
  cancel(): void;
}

export type SearchRunner<T> = (query: string) => { result: Promise<T>; cancel: Cancellable };

export interface SchedulerCallbacks<T> {
  /** The answer for `query`, only if it is still the newest query. */
  onResult(query: string, result: T): void;
  /** A failure for `query`, only if it is still the newest query. */
  onError(query: string, error: unknown): void;
  /** Busy state changes (to show the QuickPick's progress bar). */
  onBusy?(busy: boolean): void;
}

export class SearchScheduler<T> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private generation = 0;
  private inflight: Cancellable | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly run: SearchRunner<T>,
    private readonly callbacks: SchedulerCallbacks<T>,
  ) {}

  /** The user typed: (re)start the debounce; a blank query clears without searching. */
  push(query: string): void {
    this.generation += 1;
    const generation = this.generation;
    this.clearTimer();
    this.inflight?.cancel();
    this.inflight = undefined;
    if (query.trim().length === 0) {
      this.callbacks.onBusy?.(false);
      return;
    }
    this.callbacks.onBusy?.(true);
    this.timer = setTimeout(() => this.fire(query, generation), this.delayMs);
  }

  /** Stop everything (the QuickPick was hidden). */
  dispose(): void {
    this.generation += 1;
    this.clearTimer();
    this.inflight?.cancel();
    this.inflight = undefined;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private fire(query: string, generation: number): void {
    this.timer = undefined;
    let started: { result: Promise<T>; cancel: Cancellable };
    try {
      started = this.run(query);
    } catch (error) {
      this.callbacks.onBusy?.(false);
      this.callbacks.onError(query, error);
      return;
    }
    this.inflight = started.cancel;
    started.result.then(
      (result) => {
        if (generation === this.generation) {
          this.inflight = undefined;
          this.callbacks.onBusy?.(false);
          this.callbacks.onResult(query, result);
        }
      },
      (error: unknown) => {
        if (generation === this.generation) {
          this.inflight = undefined;
          this.callbacks.onBusy?.(false);
          this.callbacks.onError(query, error);
        }
      },
    );
  }
}
