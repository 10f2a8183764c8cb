// An interleaved() alternative that starts a session from a SessionManager's warm pool: the pool
// is full before each run and refills after it (not during the next alternative's run); a
// session that did not get a pooled box is counted by onCold.
export function fromPool(manager, request, onCold = () => undefined) {
  return {
    run: () => manager.create(request),
    before: () => manager.pool.full(),
    after: async (session) => {
      if (!session.warm) onCold();
      await manager.destroy(session.id);
      await manager.pool.full();
    },
  };
}
