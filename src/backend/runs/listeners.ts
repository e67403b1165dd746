// Listeners keyed by a run's id (an execution's events committed, a terminal's output or
// end): each told, in the order they came, whenever its run says something happened.

export class RunListeners {
  private readonly byRun = new Map<string, Set<() => void>>();

  /** Calls `listener` at each notify of `runId`. Returns how to stop. */
  watch(runId: string, listener: () => void): () => void {
    let set = this.byRun.get(runId);
    if (!set) {
      set = new Set();
      this.byRun.set(runId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byRun.get(runId) === set) this.byRun.delete(runId);
    };
  }

  notify(runId: string): void {
    const set = this.byRun.get(runId);
    if (!set) return;
    for (const l of [...set]) l();
  }
}
