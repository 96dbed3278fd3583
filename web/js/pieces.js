// A small SVG piece set drawn for this project. Shapes use `currentColor`
// for the body so CSS picks the colour scheme (blue/pink or classic), and
// `--piece-line` for outlines and details.

const BODY = 'fill="currentColor" stroke="var(--piece-line)" stroke-width="1.5" stroke-linejoin="round"';
const LINE = 'fill="none" stroke="var(--piece-line)" stroke-width="1.5" stroke-linecap="round"';

const SHAPES = {
  pawn: `
    <path ${BODY} d="M22.5 9a4.5 4.5 0 0 0-3.3 7.6A6.5 6.5 0 0 0 16 22c0 2.1 1 4 2.6 5.1C15.3 28.6 11 32.6 11 39h23c0-6.4-4.3-10.4-7.6-11.9A6.3 6.3 0 0 0 29 22a6.5 6.5 0 0 0-3.2-5.4A4.5 4.5 0 0 0 22.5 9z"/>`,
  rook: `
    <path ${BODY} d="M10 39h25v-4H10zM13 35l1.5-4h16l1.5 4zM14 31V17h17v14zM12 17l2-3h17l2 3zM12 14V9h4v2h4.5V9h4v2H29V9h4v5z"/>
    <path ${LINE} d="M14 17h17M14.5 31h16"/>`,
  knight: `
    <path ${BODY} d="M22 10c10.5 1 16.5 8 16 29H15c0-9 10-6.5 8-21"/>
    <path ${BODY} d="M24 18c.4 2.9-5.5 7.4-8 9-3 2-2.8 4.3-5 4-1-.9 1.4-3 0-3-1 0 .2 1.2-1 2-1 0-4 1-4-4 0-2 6-12 6-12s1.9-1.9 2-3.5c-.7-1-.5-2-.5-3 1-1 3 2.5 3 2.5h2s.8-2 2.5-3c1 0 1 3 1 3"/>
    <circle cx="12" cy="25.5" r="0.6" fill="var(--piece-line)" stroke="var(--piece-line)"/>
    <circle cx="15" cy="15.5" r="1" fill="var(--piece-line)"/>`,
  bishop: `
    <path ${BODY} d="M9 36c3.4-1 10.1.4 13.5-2 3.4 2.4 10.1 1 13.5 2 0 0 1.7.5 3 2-.7 1-1.6 1-3 .5-3.4-1-10.1.5-13.5-1-3.4 1.5-10.1 0-13.5 1-1.4.5-2.3.5-3-.5 1.4-1.9 3-2 3-2z"/>
    <path ${BODY} d="M15 32c2.5 2.5 12.5 2.5 15 0 .5-1.5 0-2 0-2 0-2.5-2.5-4-2.5-4 5.5-1.5 6-11.5-5-15.5-11 4-10.5 14-5 15.5 0 0-2.5 1.5-2.5 4 0 0-.5.5 0 2z"/>
    <circle ${BODY} cx="22.5" cy="8.5" r="2.5"/>
    <path ${LINE} d="M17.5 26h10M15 30h15M22.5 15.5v5M20 18h5"/>`,
  queen: `
    <path ${BODY} d="M9 26c8.5-1.5 21-1.5 27 0l2.5-12.5L31 25l-.3-14.1-5.2 13.6-3-14.5-3 14.5-5.2-13.6L14 25 6.5 13.5z"/>
    <path ${BODY} d="M9 26c0 2 1.5 2 2.5 4 1 1.5 1 1 .5 3.5-1.5 1-1 2.5-1 2.5-1.5 1.5 0 2.5 0 2.5 6.5 1 16.5 1 23 0 0 0 1.5-1 0-2.5 0 0 .5-1.5-1-2.5-.5-2.5-.5-2 .5-3.5 1-2 2.5-2 2.5-4-8.5-1.5-18.5-1.5-27 0z"/>
    <circle ${BODY} cx="6" cy="12" r="2"/><circle ${BODY} cx="14" cy="9" r="2"/>
    <circle ${BODY} cx="22.5" cy="8" r="2"/><circle ${BODY} cx="31" cy="9" r="2"/>
    <circle ${BODY} cx="39" cy="12" r="2"/>
    <path ${LINE} d="M11 38.5a35 35 1 0 0 23 0M11 29a35 35 1 0 1 23 0"/>`,
  king: `
    <path ${LINE} d="M22.5 11.6V6M20 8h5"/>
    <path ${BODY} d="M22.5 25s4.5-7.5 3-10.5c0 0-1-2.5-3-2.5s-3 2.5-3 2.5c-1.5 3 3 10.5 3 10.5"/>
    <path ${BODY} d="M11.5 37c5.5 3.5 15.5 3.5 21 0v-7s9-4.5 6-10.5c-4-6.5-13.5-3.5-16 4V27v-3.5c-3.5-7.5-13-10.5-16-4-3 6 5 10 5 10z"/>
    <path ${LINE} d="M11.5 30c5.5-3 15.5-3 21 0M11.5 33.5c5.5-3 15.5-3 21 0M11.5 37c5.5-3 15.5-3 21 0"/>`,
};

/** Inline SVG markup for a piece role ("knight"). */
export function pieceSvg(role) {
  const shape = SHAPES[role];
  if (!shape) throw new Error(`unknown piece role '${role}'`);
  return `<svg viewBox="0 0 45 45" focusable="false">${shape}</svg>`;
}
