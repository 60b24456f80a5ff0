/* rummyzoo web app: a game against agents in the browser (the page defines GAME_ID). */
"use strict";
(() => {
  const gameBox = document.getElementById("game");
  const movesBox = document.getElementById("moves");
  const message = document.getElementById("message");
  const logBox = document.getElementById("log");
  const lastHand = document.getElementById("last-hand");
  let shownHand = null;
  let busy = false;
  let openDecision = null;  // the decision a move answers (the server refuses one that has passed)

  function showError(text) {
    message.replaceChildren(RZ.el("div", { class: "error", id: "error", text }));
  }

  function draw(state) {
    document.body.setAttribute("data-status", state.status);
    openDecision = state.status === "your_move" ? state.decision : null;
    if (state.table) gameBox.replaceChildren(RZ.renderTable(state.table, state.agents));
    logBox.start = state.log_start;  // (only the last lines come: their own numbers)
    logBox.replaceChildren(...state.log.map((line) => RZ.el("li", { text: RZ.cardText(line) })));
    logBox.scrollTop = logBox.scrollHeight;
    if (state.last_hand && state.last_hand.hand !== shownHand) {
      shownHand = state.last_hand.hand;
      const points = state.last_hand.points
        ? state.last_hand.points.map((p, s) => `player_${s} ${p >= 0 ? "+" : ""}${p}`).join(", ")
        : "stopped at a cap, no points";
      document.getElementById("last-hand-title").textContent = `hand ${shownHand}: how it ended (${points})`;
      document.getElementById("last-hand-table").replaceChildren(RZ.renderTable(state.last_hand.table, state.agents));
      lastHand.hidden = false;
      lastHand.open = state.status !== "over";
    }
    movesBox.replaceChildren();
    if (state.status === "your_move") {
      if (state.hint) movesBox.appendChild(RZ.el("div", { class: "hint", id: "hint", text: RZ.cardText(state.hint) }));
      state.legal.forEach((m, i) => {
        const b = RZ.el("button", { class: "move-button", "data-action": String(m.action), text: `${i + 1}) ${RZ.cardText(m.description)}` });
        b.addEventListener("click", () => send({ action: m.action, decision: openDecision }));
        movesBox.appendChild(b);
      });
    } else if (state.status === "over") {
      const seedShown = document.getElementById("seed");
      // a seed hidden until now (the server's, below 2**53: exact as a number); one shown from the start keeps the server's digits
      if (seedShown.dataset.hidden && state.seed !== null && state.seed !== undefined) seedShown.textContent = `seed ${state.seed}`;
      const totals = state.totals.map((t, s) => `player_${s} ${t >= 0 ? "+" : ""}${t}`).join(", ");
      const parts = [RZ.el("div", { class: "move", id: "verdict", text: `game over: ${state.verdict}. final points: ${totals}` })];
      if (state.replay) parts.push(RZ.el("a", { href: `/runs/web_games/game/${state.replay}`, text: "replay this game" }));
      if (state.error) parts.push(RZ.el("div", { class: "error", text: state.error }));
      parts.push(RZ.el("a", { href: "/play", text: " \u00b7 new game" }));
      movesBox.replaceChildren(...parts);
    }
  }

  async function send(body) {
    if (busy) return;
    busy = true;
    try {
      const r = await fetch(`/api/games/${GAME_ID}/move`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const data = await r.json();
      // refused (a decision that has passed, say: the game went on elsewhere): the message,
      // and the game as it is now, not the old decision's moves
      if (!r.ok) { showError(data.error); refresh(); return; }
      message.replaceChildren();
      draw(data);
      if (data.status === "waiting") setTimeout(refresh, 300);  // the opponents still think
    } finally { busy = false; }
  }

  document.getElementById("move-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = document.getElementById("move-text");
    send({ move: input.value, decision: openDecision });
    input.value = "";
  });

  async function refresh() {
    const r = await fetch(`/api/games/${GAME_ID}`);
    const data = await r.json();
    if (!r.ok) { showError(data.error); return; }
    draw(data);
    if (data.status === "waiting") setTimeout(refresh, 300);
  }
  refresh();
})();
