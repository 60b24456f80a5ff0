/* rummyzoo game viewer: draws a table (Game.table_view data) and steps through replay frames.
   Used by the self-contained replay pages and by the web app (rummyzoo serve). */
"use strict";
const RZ = (() => {
  const SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k === "class") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const child of children || []) if (child) node.appendChild(child);
    return node;
  }

  function cardLabel(card) {
    const rank = card.slice(0, -1), suit = card.slice(-1);
    return (rank === "T" ? "10" : rank) + (SUITS[suit] || suit);
  }

  function card(cardString) {
    const suit = cardString.slice(-1);
    return el("span", {
      class: "card" + (suit === "d" || suit === "h" ? " red" : ""),
      "data-card": cardString, text: cardLabel(cardString),
    });
  }

  function cards(list, cls) {
    return el("span", { class: "cards " + (cls || "") }, (list || []).map(card));
  }

  /* Card strings inside a text (moves, notes) drawn with suit symbols. */
  function cardText(text) {
    return String(text).replace(/\b(10|[A2-9TJQK])([cdhs])\b/g, (m, r, s) =>
      (r === "T" ? "10" : r) + SUITS[s]);
  }

  function owners(owner) {
    if (Array.isArray(owner)) {
      const unique = [...new Set(owner.filter((o) => o >= 0))];
      return unique.map((o) => "p" + o).join("/");
    }
    return "p" + owner;
  }

  function renderTable(table, agents) {
    const root = el("div", { class: "felt", "data-title": table.title });
    root.appendChild(el("div", { class: "status", id: "status", text: cardText(table.status) +
      ` \u00b7 dealer player_${table.dealer} \u00b7 turn ${table.turn}` }));
    const piles = el("div", { class: "piles" });
    for (const pile of table.piles) {
      const box = el("div", { class: "pile", "data-pile": pile.name });
      box.appendChild(el("div", { class: "label", text: `${pile.name}: ${pile.count} card${pile.count === 1 ? "" : "s"}` }));
      if (pile.cards) box.appendChild(cards(pile.cards, "pile-cards"));
      else box.appendChild(el("span", { class: "cards" }, pile.count ? [el("span", { class: "card back", text: "#" })] : []));
      piles.appendChild(box);
    }
    root.appendChild(piles);
    if (table.table.length) {
      const melds = el("div", { class: "table-melds", id: "table-melds" });
      for (const meld of table.table) {
        const m = el("span", { class: "meld", "data-kind": meld.kind, title: `${meld.kind} laid by ${owners(meld.owner)}` },
          meld.cards.map(card));
        melds.appendChild(m);
      }
      root.appendChild(el("div", { class: "label", text: "table melds" }));
      root.appendChild(melds);
    }
    for (const note of table.notes) root.appendChild(el("div", { class: "notes", text: cardText(note) }));
    const seats = el("div", { class: "seats" });
    for (const seat of table.seats) {
      const box = el("div", { class: "seat" + (table.current === seat.seat ? " to-act" : ""), "data-seat": String(seat.seat) });
      const who = agents && agents[seat.seat] ? ` (${agents[seat.seat]})` : "";
      box.appendChild(el("div", { class: "name", text: seat.name + who }));
      if (seat.hand) {
        box.appendChild(el("div", {}, [el("span", { class: "label", text: "hand " }), cards(seat.hand, "hand")]));
      } else {
        const backs = [];
        for (let i = 0; i < seat.count; i++) backs.push(el("span", { class: "card back", text: "#" }));
        box.appendChild(el("div", {}, [el("span", { class: "label", text: `hand (${seat.count} cards) ` }),
          el("span", { class: "cards hidden-hand", "data-count": String(seat.count) }, backs)]));
        if (seat.known.length) box.appendChild(el("div", {}, [el("span", { class: "label", text: "seen " }), cards(seat.known, "known")]));
      }
      if (seat.melds.length) {
        box.appendChild(el("div", { class: "seat-melds" }, [el("span", { class: "label", text: "melds " }),
          ...seat.melds.map((m) => el("span", { class: "meld" }, m.map(card)))]));
      }
      if (seat.singles && seat.singles.length) {
        box.appendChild(el("div", { class: "seat-singles" }, [el("span", { class: "label", text: "singles " }), cards(seat.singles, "singles")]));
      }
      const notes = seat.notes.slice();
      if (seat.points !== null && seat.points !== undefined) notes.push(`hand points ${seat.points >= 0 ? "+" : ""}${seat.points}`);
      if (notes.length) box.appendChild(el("div", { class: "notes", text: cardText(notes.join(" \u00b7 ")) }));
      seats.appendChild(box);
    }
    root.appendChild(seats);
    if (table.scores) {
      const row = table.scores.map((s, i) => el("td", { "data-seat": String(i), text: String(s) }));
      root.appendChild(el("table", { class: "scores", id: "scores" }, [
        el("tr", {}, [el("th", { text: `match (target ${table.target})` }), ...table.seats.map((s) => el("th", { text: s.name }))]),
        el("tr", {}, [el("td", { text: "points" }), ...row]),
      ]));
    }
    return root;
  }

  /* A replay viewer: payload = replay_frames(...) output. */
  function Viewer(root, payload) {
    const frames = payload.frames;
    let index = 0;
    const handStarts = [];
    frames.forEach((f, i) => { if (!handStarts.some((h) => h.hand === f.hand)) handStarts.push({ hand: f.hand, index: i }); });

    const counter = el("span", { id: "step-counter" });
    const slider = el("input", { type: "range", min: "0", max: String(Math.max(frames.length - 1, 0)), value: "0", id: "slider", "aria-label": "step" });
    const handSelect = el("select", { id: "hand-select", "aria-label": "jump to hand" },
      handStarts.map((h) => el("option", { value: String(h.index), text: `hand ${h.hand}` })));
    const button = (id, text, title, fn) => { const b = el("button", { id, title, text }); b.addEventListener("click", fn); return b; };
    const controls = el("div", { class: "controls" }, [
      button("first", "|\u2039 first", "first move (Home)", () => show(0)),
      button("prev-hand", "\u00ab hand", "previous hand (PageUp)", () => jumpHand(-1)),
      button("prev", "\u2039 back", "previous move (\u2190 or k)", () => show(index - 1)),
      button("next", "next \u203a", "next move (\u2192, j or space)", () => show(index + 1)),
      button("next-hand", "hand \u00bb", "next hand (PageDown)", () => jumpHand(1)),
      button("last", "last \u203a|", "last move (End)", () => show(frames.length - 1)),
      handSelect, slider, counter,
    ]);
    const tableBox = el("div", { id: "table" });
    const movePanel = el("div", { class: "panel", id: "move-panel" });
    root.appendChild(controls);
    root.appendChild(el("div", { class: "keys", text: "keys: \u2190/\u2192 (or k/j, space) step, PageUp/PageDown hand, Home/End first/last" }));
    root.appendChild(tableBox);
    root.appendChild(movePanel);

    function currentHandPos() {
      let pos = 0;
      handStarts.forEach((h, i) => { if (h.index <= index) pos = i; });
      return pos;
    }
    function jumpHand(delta) {
      const pos = Math.min(Math.max(currentHandPos() + delta, 0), handStarts.length - 1);
      show(handStarts[pos].index);
    }
    function show(i) {
      if (!frames.length) { counter.textContent = "no moves"; return; }
      index = Math.min(Math.max(i, 0), frames.length - 1);
      const frame = frames[index];
      slider.value = String(index);
      handSelect.value = String(handStarts[currentHandPos()].index);
      counter.textContent = `step ${index + 1} / ${frames.length}`;
      root.setAttribute("data-index", String(index));
      tableBox.replaceChildren(renderTable(frame.table, payload.agents));
      movePanel.replaceChildren();
      if (frame.kind === "move") {
        movePanel.appendChild(el("div", { class: "move", id: "move", text:
          `hand ${frame.hand}, move ${frame.index + 1}: player_${frame.seat} (${frame.agent}) plays ${cardText(frame.move)}` }));
        if (frame.legal) {
          const list = el("ol", { class: "legal", id: "legal" }, frame.legal.map((m) =>
            el("li", { class: m === frame.move ? "played" : "", text: cardText(m) })));
          movePanel.appendChild(el("div", { class: "label", text: `legal moves (${frame.legal_count}):` }));
          movePanel.appendChild(list);
        } else {
          movePanel.appendChild(el("div", { class: "legal", text: "legal moves hidden from this seat's view" }));
        }
      } else if (frame.kind === "stop") {
        movePanel.appendChild(el("div", { class: "move", id: "move", text:
          `the recording stops here, mid-game, after ${frame.moves} move(s): the table as it stands` }));
      } else {
        const pts = frame.points ? frame.points.map((p, s) => `player_${s} ${p >= 0 ? "+" : ""}${p}`).join(", ") : "no points (cut by a cap)";
        movePanel.appendChild(el("div", { class: "move", id: "move", text: `hand ${frame.hand} over: ${pts}` }));
        movePanel.appendChild(el("div", { id: "totals", text: "totals: " + frame.totals.map((t, s) => `player_${s} ${t}`).join(", ") +
          (frame.episode_over ? " \u00b7 game over" : "") }));
      }
    }
    slider.addEventListener("input", () => show(Number(slider.value)));
    handSelect.addEventListener("change", () => show(Number(handSelect.value)));
    document.addEventListener("keydown", (e) => {
      if (e.target && (e.target.tagName === "INPUT" && e.target.type !== "range" || e.target.tagName === "SELECT")) return;
      const keys = { ArrowRight: () => show(index + 1), j: () => show(index + 1), " ": () => show(index + 1),
        ArrowLeft: () => show(index - 1), k: () => show(index - 1), Home: () => show(0),
        End: () => show(frames.length - 1), PageDown: () => jumpHand(1), PageUp: () => jumpHand(-1) };
      if (keys[e.key]) { keys[e.key](); e.preventDefault(); }
    });
    show(0);
    return { show, get index() { return index; } };
  }

  return { el, card, cards, cardText, renderTable, Viewer };
})();
