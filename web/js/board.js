// The board: pure state (what each square shows) and its rendering.
//
// The pure half (everything above `BoardView`) has no DOM and is unit-tested
// under Node. It knows no chess rules: legal destinations, premove
// destinations, the king in check and the last move all come from the server.

import { pieceSvg } from "./pieces.js";

export const FILES = ["a", "b", "c", "d", "e", "f", "g", "h"];
export const RANKS = ["1", "2", "3", "4", "5", "6", "7", "8"];

const ROLE_BY_LETTER = { p: "pawn", n: "knight", b: "bishop", r: "rook", q: "queen", k: "king" };
const LETTER_BY_ROLE = Object.fromEntries(Object.entries(ROLE_BY_LETTER).map(([l, r]) => [r, l]));

/** Material values used only to show the captured-material difference. */
const ROLE_VALUE = { pawn: 1, knight: 3, bishop: 3, rook: 5, queen: 9, king: 0 };
const START_COUNT = { pawn: 8, knight: 2, bishop: 2, rook: 2, queen: 1, king: 1 };
/** Order in which captured pieces are listed: most valuable first. */
const CAPTURE_ORDER = ["queen", "rook", "bishop", "knight", "pawn"];

/** True for a square name such as "e4". */
export function isSquare(name) {
  return typeof name === "string" && /^[a-h][1-8]$/.test(name);
}

/**
 * Reads the piece placement field of a FEN into a Map from square to piece.
 * Throws an Error naming the problem when the placement is malformed.
 */
export function piecesFromFen(fen) {
  if (typeof fen !== "string") throw new Error("fen must be a string");
  const placement = fen.trim().split(/\s+/)[0];
  const rows = placement.split("/");
  if (rows.length !== 8) throw new Error(`fen placement needs 8 ranks, got ${rows.length}`);
  const pieces = new Map();
  rows.forEach((row, index) => {
    const rank = 8 - index;
    let file = 0;
    for (const ch of row) {
      if (/[1-8]/.test(ch)) {
        file += Number(ch);
      } else {
        const role = ROLE_BY_LETTER[ch.toLowerCase()];
        if (!role) throw new Error(`fen has an unknown piece letter '${ch}'`);
        if (file > 7) throw new Error(`fen rank ${rank} has more than 8 squares`);
        pieces.set(FILES[file] + rank, { color: ch === ch.toUpperCase() ? "white" : "black", role });
        file += 1;
      }
    }
    if (file !== 8) throw new Error(`fen rank ${rank} has ${file} squares, not 8`);
  });
  return pieces;
}

/** The side to move from a FEN ("white" or "black"); white when the field is missing. */
export function turnFromFen(fen) {
  return fen.trim().split(/\s+/)[1] === "b" ? "black" : "white";
}

/** The letter of a role as used in UCI promotions ("queen" -> "q"). */
export function roleLetter(role) {
  return LETTER_BY_ROLE[role];
}

/** Splits a UCI move ("e7e8q") into its parts; null when it is not one. */
export function parseUci(uci) {
  const m = /^([a-h][1-8])([a-h][1-8])([qrbn])?$/.exec(uci ?? "");
  if (!m) return null;
  return { from: m[1], to: m[2], promotion: m[3] ? ROLE_BY_LETTER[m[3]] : null };
}

/**
 * The 64 squares in drawing order (top-left first, row by row) for the
 * given orientation: the side at the bottom of the screen.
 */
export function squaresInDrawOrder(orientation) {
  const out = [];
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 8; col++) {
      out.push(orientation === "black" ? FILES[7 - col] + RANKS[row] : FILES[col] + RANKS[7 - row]);
    }
  }
  return out;
}

/** Column and row (0..7, from the top-left) of a square as drawn. */
export function squarePosition(square, orientation) {
  const file = FILES.indexOf(square[0]);
  const rank = RANKS.indexOf(square[1]);
  return orientation === "black" ? { col: 7 - file, row: rank } : { col: file, row: 7 - rank };
}

/** The square one step away on screen (arrow keys), staying on the board. */
export function neighbourSquare(square, direction, orientation) {
  const { col, row } = squarePosition(square, orientation);
  const delta = { left: [-1, 0], right: [1, 0], up: [0, -1], down: [0, 1] }[direction];
  if (!delta) return square;
  const c = Math.min(7, Math.max(0, col + delta[0]));
  const r = Math.min(7, Math.max(0, row + delta[1]));
  return squaresInDrawOrder(orientation)[r * 8 + c];
}

/** Light or dark square colour. */
export function isLightSquare(square) {
  const file = FILES.indexOf(square[0]);
  const rank = RANKS.indexOf(square[1]);
  return (file + rank) % 2 === 1;
}

/** Accessible name of a square: "e4, white knight" or "e4, empty". */
export function squareLabel(square, piece) {
  return piece ? `${square}, ${piece.color} ${piece.role}` : `${square}, empty`;
}

function countPieces(pieces) {
  const count = { white: {}, black: {} };
  for (const { color, role } of pieces.values()) {
    count[color][role] = (count[color][role] ?? 0) + 1;
  }
  return count;
}

/**
 * Material captured by each side, computed from what is left on the board
 * compared with the starting position (the usual one unless `initial` is
 * given, for games from a set-up position); a promoted pawn counts as the
 * piece it became. `byWhite` lists black pieces White has taken;
 * `advantage` is White's material minus Black's.
 */
export function capturedMaterial(pieces, initial = null) {
  const count = countPieces(pieces);
  const start = initial ? countPieces(initial) : { white: START_COUNT, black: START_COUNT };
  const missing = (color) => {
    const list = [];
    for (const role of CAPTURE_ORDER) {
      const gone = Math.max(0, (start[color][role] ?? 0) - (count[color][role] ?? 0));
      for (let i = 0; i < gone; i++) list.push(role);
    }
    return list;
  };
  const material = (color) =>
    Object.entries(count[color]).reduce((sum, [role, n]) => sum + ROLE_VALUE[role] * n, 0);
  return {
    byWhite: missing("black"),
    byBlack: missing("white"),
    advantage: material("white") - material("black"),
  };
}

/**
 * Everything the board draws, as plain data. Inputs are what the server sent
 * plus the local selection:
 * - `fen`, `lastMove` ({from,to} or null), `check` (square of a king in check or null)
 * - `dests` (square -> destinations for the player to move, may be empty)
 * - `premoveDests` (same shape, for the waiting player), `premove` ({from,to} or null)
 * - `selected` (square or null), `orientation` ("white" | "black")
 */
export function boardModel(input) {
  const pieces = input.pieces ?? piecesFromFen(input.fen);
  const orientation = input.orientation === "black" ? "black" : "white";
  const selected = input.selected ?? null;
  const targets = new Set(
    selected ? (input.dests?.[selected] ?? input.premoveDests?.[selected] ?? []) : [],
  );
  const premoveSelection = Boolean(selected && !input.dests?.[selected] && input.premoveDests?.[selected]);
  const squares = squaresInDrawOrder(orientation).map((square) => {
    const piece = pieces.get(square) ?? null;
    const classes = [isLightSquare(square) ? "light" : "dark"];
    if (input.lastMove && (input.lastMove.from === square || input.lastMove.to === square)) {
      classes.push("last-move");
    }
    if (input.check === square) classes.push("check");
    if (selected === square) classes.push("selected");
    if (targets.has(square)) {
      classes.push(piece ? "capture-target" : "move-target");
      if (premoveSelection) classes.push("premove-target");
    }
    if (input.premove && (input.premove.from === square || input.premove.to === square)) {
      classes.push("premove");
    }
    const movable = Boolean(input.dests?.[square]?.length || input.premoveDests?.[square]?.length);
    if (movable) classes.push("movable");
    return { square, piece, classes, label: squareLabel(square, piece), movable, coords: edgeCoordinates(square, orientation) };
  });
  return { orientation, squares, captured: capturedMaterial(pieces, input.initialPieces ?? null) };
}

/**
 * The coordinates printed on a square, as on a wooden board: the file letter
 * on the squares of the bottom row and the rank number on the squares of the
 * left column, both as seen on screen (so they turn with the board).
 */
export function edgeCoordinates(square, orientation) {
  const { col, row } = squarePosition(square, orientation);
  return { file: row === 7 ? square[0] : null, rank: col === 0 ? square[1] : null };
}

/**
 * Renders a `boardModel` into a container element, keeping one element per
 * square so focus survives redraws, and animating the moved piece.
 */
export class BoardView {
  /**
   * @param {HTMLElement} root the element that becomes the board grid
   * @param {HTMLElement|null} coordLayer an element laid over the board for the printed
   *   coordinates (outside the grid, so each square's accessible name stays its own)
   */
  constructor(root, coordLayer = null) {
    this.root = root;
    this.coordLayer = coordLayer;
    this.root.classList.add("board");
    this.root.setAttribute("role", "grid");
    this.root.setAttribute("aria-label", "Chess board");
    this.cells = new Map();
    this.orientation = null;
    this.pieceAt = new Map();
  }

  /** The element of a square. */
  cell(square) {
    return this.cells.get(square);
  }

  /** Draws the model; `animate` ({from,to}) slides the piece that just moved. */
  render(model, animate = null) {
    if (this.orientation !== model.orientation) this.#build(model);
    for (const sq of model.squares) {
      const el = this.cells.get(sq.square);
      el.className = `square ${sq.classes.join(" ")}`;
      el.setAttribute("aria-label", sq.label);
      const key = sq.piece ? `${sq.piece.color}-${sq.piece.role}` : "";
      if (this.pieceAt.get(sq.square) !== key) {
        el.querySelector(".piece")?.remove();
        if (sq.piece) {
          el.insertAdjacentHTML(
            "beforeend",
            `<span class="piece ${sq.piece.color} ${sq.piece.role}" aria-hidden="true">${pieceSvg(sq.piece.role)}</span>`,
          );
        }
        this.pieceAt.set(sq.square, key);
      }
    }
    if (animate) this.#slide(animate.from, animate.to);
  }

  #build(model) {
    this.root.replaceChildren();
    this.cells.clear();
    this.pieceAt.clear();
    this.orientation = model.orientation;
    const doc = this.root.ownerDocument;
    let row = null;
    model.squares.forEach((sq, i) => {
      if (i % 8 === 0) {
        // Rows exist for assistive technology only (`display: contents`).
        row = doc.createElement("div");
        row.className = "board-row";
        row.setAttribute("role", "row");
        this.root.appendChild(row);
      }
      const el = doc.createElement("div");
      el.dataset.square = sq.square;
      el.setAttribute("role", "gridcell");
      el.tabIndex = -1;
      this.cells.set(sq.square, el);
      row.appendChild(el);
    });
    this.#buildCoordinates(model);
  }

  // Printed coordinates are decoration (each square's label already names it).
  // Built as nodes with their position set through the CSSOM: the server's
  // Content-Security-Policy refuses inline style attributes.
  #buildCoordinates(model) {
    if (!this.coordLayer) return;
    const doc = this.coordLayer.ownerDocument;
    this.coordLayer.setAttribute("aria-hidden", "true");
    this.coordLayer.replaceChildren();
    for (const sq of model.squares) {
      const { col, row } = squarePosition(sq.square, model.orientation);
      const shade = isLightSquare(sq.square) ? "on-light" : "on-dark";
      for (const kind of ["rank", "file"]) {
        const text = sq.coords[kind];
        if (!text) continue;
        const span = doc.createElement("span");
        span.className = `coord ${kind} ${shade}`;
        span.dataset.of = sq.square;
        span.style.left = `${col * 12.5}%`;
        span.style.top = `${row * 12.5}%`;
        span.textContent = text;
        this.coordLayer.appendChild(span);
      }
    }
  }

  // Moves the piece on `to` visually from `from` and lets CSS transition it home.
  #slide(from, to) {
    const piece = this.cells.get(to)?.querySelector(".piece");
    if (!piece || !this.cells.get(from)) return;
    const a = squarePosition(from, this.orientation);
    const b = squarePosition(to, this.orientation);
    const size = this.cells.get(to).offsetWidth; // one square, in CSS pixels
    piece.style.transition = "none";
    piece.style.transform = `translate(${(a.col - b.col) * size}px, ${(a.row - b.row) * size}px)`;
    piece.getBoundingClientRect(); // commit the start position before transitioning
    piece.style.transition = "";
    piece.style.transform = "";
  }
}

/**
 * Applies an already-legal UCI move to a piece map and returns a new map.
 * This is bookkeeping, not rules: the server has decided the move is legal;
 * this only moves what such a move moves (the rook when the king goes two
 * squares, the pawn taken en passant, the promoted piece) so earlier
 * positions can be redrawn during review.
 */
export function applyUci(pieces, uci) {
  const move = parseUci(uci);
  if (!move) throw new Error(`not a UCI move: '${uci}'`);
  const next = new Map(pieces);
  const piece = next.get(move.from);
  if (!piece) throw new Error(`no piece on ${move.from} for ${uci}`);
  next.delete(move.from);
  const fileDelta = FILES.indexOf(move.to[0]) - FILES.indexOf(move.from[0]);
  if (piece.role === "king" && Math.abs(fileDelta) === 2) {
    const rank = move.from[1];
    const [rookFrom, rookTo] = fileDelta > 0 ? ["h" + rank, "f" + rank] : ["a" + rank, "d" + rank];
    const rook = next.get(rookFrom);
    if (rook) {
      next.delete(rookFrom);
      next.set(rookTo, rook);
    }
  }
  if (piece.role === "pawn" && fileDelta !== 0 && !next.has(move.to)) {
    next.delete(move.to[0] + move.from[1]); // en passant: the taken pawn sits beside the mover
  }
  next.set(move.to, move.promotion ? { color: piece.color, role: move.promotion } : piece);
  return next;
}

/** Square of the king of `color`, or null. */
export function kingSquare(pieces, color) {
  for (const [square, piece] of pieces) {
    if (piece.role === "king" && piece.color === color) return square;
  }
  return null;
}
