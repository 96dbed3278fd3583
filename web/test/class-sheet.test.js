import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_CLASS_SIZE, classCount, classCsv, csvField, pupilNames, sheetRows } from "../js/class-sheet.js";

test("typed names are read one per line, blank lines and spaces dropped", () => {
  assert.deepEqual(pupilNames("  Ann Lee \n\nBen\r\n  \nCho\n"), ["Ann Lee", "Ben", "Cho"]);
  assert.deepEqual(pupilNames(""), []);
  assert.deepEqual(pupilNames(undefined), []);
});

test("the count is one per name, else the number typed, within the server's limit", () => {
  assert.deepEqual(classCount(["a", "b"], "30"), { count: 2 });
  assert.deepEqual(classCount([], "30"), { count: 30 });
  for (const bad of ["", "0", "-3", "2.5", "many"]) assert.ok(classCount([], bad).error, bad);
  assert.match(classCount([], String(MAX_CLASS_SIZE + 1)).error, /At most 100/);
  assert.match(classCount(Array(MAX_CLASS_SIZE + 1).fill("x"), "").error, /At most 100/);
});

test("each account is paired with the name typed in its place", () => {
  const created = {
    sign_in_url: "/account.html",
    accounts: [{ username: "lions-k7dp", password: "abcd-efgh-jkmn" }, { username: "lions-m3xq", password: "pqrs-tuvw-xyz2" }],
  };
  assert.deepEqual(sheetRows(created, ["Ann"], "http://school.example:8080"), [
    { pupil: "Ann", username: "lions-k7dp", password: "abcd-efgh-jkmn", signIn: "http://school.example:8080/account.html" },
    { pupil: "", username: "lions-m3xq", password: "pqrs-tuvw-xyz2", signIn: "http://school.example:8080/account.html" },
  ]);
});

test("CSV fields are quoted when needed and never run as formulas", () => {
  assert.equal(csvField("plain"), "plain");
  assert.equal(csvField('Lee, "Ann"'), '"Lee, ""Ann"""');
  assert.equal(csvField("two\nlines"), '"two\nlines"');
  assert.equal(csvField("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  assert.equal(csvField("+1"), "'+1");
  assert.equal(csvField("-2"), "'-2");
  assert.equal(csvField("@SUM"), "'@SUM");
  assert.equal(csvField("lions-k7dp"), "lions-k7dp");
});

test("the CSV has a header and one CRLF line per pupil", () => {
  const text = classCsv([{ pupil: "Ann", username: "lions-k7dp", password: "abcd-efgh-jkmn", signIn: "http://x/account.html" }]);
  assert.equal(text, "pupil,username,password,sign in at\r\nAnn,lions-k7dp,abcd-efgh-jkmn,http://x/account.html\r\n");
});
