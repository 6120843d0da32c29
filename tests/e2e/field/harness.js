// Field-case harness for the default turn-items path (turnItems: "onRead"): installed before the
// SDK page loads; reads `turn.items` at several moments and compares with the engine's digest.
(() => {
  const fh = (window.__fh = { mismatches: [], reads: 0, published: 0, log: [] });
  const msgText = (c) => (c == null ? null : typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p.text ?? "").join("") : JSON.stringify(c));
  // What a user sees of a turn's items, in the digest's terms: messages (not interrupted) with text,
  // reasoning, refusal and the calls' ids and argument text; tool results with content.
  fh.project = (items) =>
    items
      .filter((i) => !(i.body.kind === "message" && i.body.interrupted))
      .map((i) =>
        i.body.kind === "message"
          ? { kind: "message", id: i.body.id, text: msgText(i.body.content) || null, reasoning: i.body.reasoning ?? null, refusal: i.body.refusal ?? null, calls: (i.body.toolCalls ?? []).map((c) => c.toolCallId + ":" + c.argumentsText) }
          : i.body.kind === "toolResult"
            ? { kind: "toolResult", toolCallId: i.body.toolCallId, content: i.body.content }
            : { kind: i.body.kind },
      );
  fh.projectDigest = (turn) =>
    turn.items.map((i) =>
      i.kind === "message"
        ? { kind: "message", id: i.id, text: i.text || null, reasoning: i.reasoning ?? null, refusal: i.refusal ?? null, calls: i.toolCalls.map((c) => c.id + ":" + c.argumentsText) }
        : i.kind === "toolResult"
          ? { kind: "toolResult", toolCallId: i.toolCallId, content: i.content }
          : { kind: i.kind },
    );
  fh.client = (turnItems, fault, ns) => {
    const F = window.forgestream;
    const o = { baseUrl: "", storage: "local", storageNamespace: ns ?? "field", reconnect: { baseDelayMs: 20, maxDelayMs: 200, idleTimeoutMs: 5000 } };
    if (turnItems) o.turnItems = turnItems;
    if (fault) o.headers = { "x-forgestream-fault": fault };
    return new F.AgentClient(o);
  };
  const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  // Watches `session`: every published snapshot is compared with the engine's digest at that
  // moment for the turns read then (a random subset, `pNow`), and again a little later (a read of
  // the snapshot object current then, `pLater`, against the digest of its publication).
  fh.watch = (session, label, opts = {}) => {
    const pNow = opts.pNow ?? 0.5, pLater = opts.pLater ?? 0.5;
    const byTurns = new Map(); // snapshot.turns array -> digest by turn id at its publication
    const check = (when, snap, digestTurns) => {
      for (const t of snap.turns) {
        const d = digestTurns.get(t.turnId);
        if (!d) continue;
        fh.reads++;
        const got = fh.project(t.items);
        const want = fh.projectDigest(d);
        if (!eq(got, want)) fh.mismatches.push({ label, when, turnId: t.turnId, status: t.status, conn: snap.connection.status, got, want });
      }
    };
    let lastTurns;
    const onPublish = () => {
      const snap = session.getSnapshot();
      // Only the store's publications (the chat also notifies for its outbox, role, window):
      // there the engine has no undrained change, so its digest is what was published.
      if (snap.turns === lastTurns) return;
      lastTurns = snap.turns;
      fh.published++;
      const digest = session.exportDigest();
      const digestTurns = new Map(digest.turns.map((t) => [t.id, t]));
      byTurns.set(snap.turns, digestTurns);
      fh.log.push({ label, n: fh.published, conn: snap.connection.status, turns: snap.turns.map((t) => t.turnId + ":" + t.status) });
      if (Math.random() < pNow) {
        // Only some turns, so others stay unread for later reads.
        const some = { ...snap, turns: snap.turns.filter(() => Math.random() < 0.7) };
        check("now", some, digestTurns);
      }
      if (Math.random() < pLater) {
        setTimeout(() => {
          const later = session.getSnapshot();
          const dt = byTurns.get(later.turns);
          if (dt) check("later", later, dt);
        }, Math.random() * 40);
      }
    };
    const off = session.subscribe(onPublish);
    return off;
  };
  fh.final = (snap) => snap.turns.map((t) => ({ turnId: t.turnId, status: t.status, items: fh.project(t.items) }));
  fh.finalRaw = (snap) => snap.turns.map((t) => ({ turnId: t.turnId, status: t.status, items: t.items.map(({ version, ...rest }) => rest) }));
  fh.digestFinal = (session) => session.exportDigest().turns.map((t) => ({ turnId: t.id, status: t.status, items: fh.projectDigest(t) }));
  fh.messages = (snap) => JSON.stringify(snap.messages.map((m) => (m.kind === "user" ? { u: m.text, s: m.state } : m.kind === "assistant" ? { a: m.parts.map((p) => (p.kind === "tool" ? p.name + "/" + p.state : p.kind + ":" + (p.text ?? ""))), i: !!m.interrupted } : { k: m.kind })));
})();
