// A club's class sheet: the accounts a leader just created, paired with the
// pupils' names the leader typed (those names never leave the browser), as
// printable slips and as a CSV file (docs/protocol.md, "Classes").

/** The most accounts one class request creates (the server's limit). */
export const MAX_CLASS_SIZE = 100;

/** The names typed one per line, trimmed, blank lines dropped. */
export function pupilNames(text) {
  return String(text ?? "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/**
 * How many accounts to ask for: one per typed name, else the number field.
 * `{ count }`, or `{ error }` in words for the leader.
 */
export function classCount(names, countText) {
  const count = names.length > 0 ? names.length : Number(countText);
  if (!Number.isInteger(count) || count < 1) return { error: "Type the pupils' names or how many accounts to create." };
  if (count > MAX_CLASS_SIZE) return { error: `At most ${MAX_CLASS_SIZE} accounts at once.` };
  return { count };
}

/**
 * One row per created account: the typed name in the same order (empty when
 * none was typed), the username, the password and where to sign in.
 */
export function sheetRows(created, names, origin) {
  const signIn = new URL(created.sign_in_url, origin).href;
  return created.accounts.map((account, i) => ({
    pupil: names[i] ?? "",
    username: account.username,
    password: account.password,
    signIn,
  }));
}

/**
 * A CSV field: quoted when it holds a comma, quote or line break (RFC 4180),
 * and a typed name that a spreadsheet would run as a formula (`=`, `+`, `-`,
 * `@`, tab, carriage return first) starts with an apostrophe instead.
 */
export function csvField(text) {
  let value = String(text);
  if (/^[=+\-@\t\r]/.test(value)) value = `'${value}`;
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The sheet as a CSV file's text, with a header line, CRLF line ends. */
export function classCsv(rows) {
  const lines = [["pupil", "username", "password", "sign in at"]];
  for (const row of rows) lines.push([row.pupil, row.username, row.password, row.signIn]);
  return lines.map((fields) => fields.map(csvField).join(",")).join("\r\n") + "\r\n";
}
