// Input on the board: tap/click, drag and drop (pointer events, so mouse,
// pen and touch alike), and the keyboard. The pure part (`tapSquare`,
// `pressSquare`, `needsPromotion`, `promotionChoices`) decides what a tap or
// a press means; `BoardInput` turns DOM events into taps and drops and
// reports intents to its owner.

import { neighbourSquare, squarePosition } from "./board.js";

export const PROMOTION_ROLES = ["queen", "knight", "rook", "bishop"];

/**
 * What tapping `square` does, given the current selection and the
 * destinations the server sent. Returns the new selection and at most one
 * intent: `play` ({from,to}) during your turn or `premove` ({from,to}) during
 * the opponent's, or `clearPremove` when tapping elsewhere clears one.
 *
 * @param {{selected: string|null, dests: object, premoveDests: object, hasPremove?: boolean}} state
 */
export function tapSquare(state, square) {
  const dests = state.dests ?? {};
  const premoveDests = state.premoveDests ?? {};
  const { selected } = state;
  if (selected) {
    if (dests[selected]?.includes(square)) {
      return { selected: null, play: { from: selected, to: square } };
    }
    if (!dests[selected] && premoveDests[selected]?.includes(square)) {
      return { selected: null, premove: { from: selected, to: square } };
    }
    if (selected === square) return { selected: null };
  }
  if (dests[square]?.length || premoveDests[square]?.length) {
    return { selected: square, clearPremove: Boolean(state.hasPremove && premoveDests[square]) };
  }
  return { selected: null, clearPremove: Boolean(state.hasPremove) };
}

/**
 * What pressing (pointer down on) `square` does before the pointer is
 * released. A press that would select a piece selects it at once, so that
 * the piece can be dragged from there; its release is then not a tap. Any
 * other press does nothing until the release, which is a tap. Returns the
 * `tapSquare` result when the press selects, null otherwise.
 */
export function pressSquare(state, square) {
  const result = tapSquare(state, square);
  return result.selected === square ? result : null;
}

/** True when moving this piece to `to` reaches the far rank with a pawn. */
export function needsPromotion(piece, to) {
  if (!piece || piece.role !== "pawn") return false;
  return (piece.color === "white" && to[1] === "8") || (piece.color === "black" && to[1] === "1");
}

/**
 * Where the four promotion pieces are drawn: on the promotion square and the
 * three squares below it toward the player (as seen on screen).
 */
export function promotionChoices(square, orientation) {
  const { col, row } = squarePosition(square, orientation);
  const towardCentre = row === 0 ? 1 : -1;
  return PROMOTION_ROLES.map((role, i) => ({ role, col, row: row + towardCentre * i }));
}

/** The UCI text of an intent ("e7e8q"). */
export function toUci(from, to, promotion = null) {
  const letter = { queen: "q", rook: "r", bishop: "b", knight: "n" }[promotion] ?? "";
  return `${from}${to}${letter}`;
}


/** Distance in CSS pixels a pointer must move before a press becomes a drag. */
const DRAG_THRESHOLD_PX = 4;

/**
 * Wires pointer and keyboard events of a board element to an owner that
 * implements:
 * - `tap(square)`: a click, a tap, or Enter on a square
 * - `drop(from, to)`: a piece dragged from one square to another
 * - `pressStart(square)`: returns true when the press selected a piece
 *   (so releasing it in place keeps the selection)
 * - `isSelected(square)`: only a selected piece can be dragged
 * - `escape()`: Escape pressed
 * - `orientation()`: the side at the bottom
 */
export class BoardInput {
  constructor(boardEl, owner) {
    this.el = boardEl;
    this.owner = owner;
    this.press = null;
    this.focused = null;
    boardEl.addEventListener("pointerdown", (e) => this.#down(e));
    boardEl.addEventListener("keydown", (e) => this.#key(e));
    boardEl.addEventListener("focusin", (e) => {
      const sq = e.target.closest?.("[data-square]")?.dataset.square;
      if (sq) this.focused = sq;
    });
    this.el.ownerDocument.addEventListener("pointermove", (e) => this.#move(e));
    this.el.ownerDocument.addEventListener("pointerup", (e) => this.#up(e));
    this.el.ownerDocument.addEventListener("pointercancel", () => this.#cancelDrag());
    this.#makeFocusable();
  }

  /** Makes exactly one square reachable with Tab (roving tabindex); call after each render. */
  refreshFocus() {
    this.#makeFocusable();
  }

  #makeFocusable() {
    const squares = this.el.querySelectorAll("[data-square]");
    if (!squares.length) return;
    const target = this.focused ?? (this.owner.orientation() === "black" ? "e7" : "e2");
    for (const cell of squares) cell.tabIndex = cell.dataset.square === target ? 0 : -1;
  }

  #squareAt(x, y) {
    const hit = this.el.ownerDocument.elementFromPoint(x, y);
    const cell = hit?.closest?.("[data-square]");
    return cell && this.el.contains(cell) ? cell.dataset.square : null;
  }

  #down(e) {
    if (e.button !== undefined && e.button !== 0) return;
    const cell = e.target.closest("[data-square]");
    if (!cell) return;
    e.preventDefault(); // no text selection or native image drag
    const square = cell.dataset.square;
    const selectedNow = this.owner.pressStart(square);
    this.press = { square, x: e.clientX, y: e.clientY, selectedNow, ghost: null, pointerId: e.pointerId };
    this.focused = square;
  }

  #move(e) {
    const p = this.press;
    if (!p || e.pointerId !== p.pointerId) return;
    if (!p.ghost) {
      if (Math.hypot(e.clientX - p.x, e.clientY - p.y) < DRAG_THRESHOLD_PX) return;
      const piece = this.el.querySelector(`[data-square="${p.square}"] .piece`);
      if (!piece || !this.owner.isSelected(p.square)) return;
      const rect = piece.getBoundingClientRect();
      const ghost = piece.cloneNode(true);
      ghost.classList.add("dragging");
      ghost.style.width = `${rect.width}px`;
      ghost.style.height = `${rect.height}px`;
      this.el.ownerDocument.body.appendChild(ghost);
      piece.classList.add("drag-origin");
      p.ghost = ghost;
      p.size = rect.width;
    }
    p.ghost.style.left = `${e.clientX - p.size / 2}px`;
    p.ghost.style.top = `${e.clientY - p.size / 2}px`;
  }

  #up(e) {
    const p = this.press;
    if (!p || e.pointerId !== p.pointerId) return;
    this.press = null;
    if (p.ghost) {
      p.ghost.remove();
      this.el.querySelector(".drag-origin")?.classList.remove("drag-origin");
      const to = this.#squareAt(e.clientX, e.clientY);
      if (to && to !== p.square) this.owner.drop(p.square, to);
      return;
    }
    // A press released in place is a tap, except the press that just selected the piece.
    if (!p.selectedNow) this.owner.tap(p.square);
  }

  #cancelDrag() {
    if (this.press?.ghost) this.press.ghost.remove();
    this.el.querySelector(".drag-origin")?.classList.remove("drag-origin");
    this.press = null;
  }

  #key(e) {
    const cell = e.target.closest?.("[data-square]");
    const square = cell?.dataset.square ?? this.focused;
    const direction = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down" }[e.key];
    if (direction && square) {
      e.preventDefault();
      e.stopPropagation(); // arrows on the board move focus, not the game review
      this.focused = neighbourSquare(square, direction, this.owner.orientation());
      this.#makeFocusable();
      this.el.querySelector(`[data-square="${this.focused}"]`)?.focus();
    } else if ((e.key === "Enter" || e.key === " ") && square) {
      e.preventDefault();
      this.owner.tap(square);
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      this.owner.escape();
    }
  }
}
