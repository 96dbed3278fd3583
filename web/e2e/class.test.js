// A club's class in the browser: the teacher types the pupils' names and
// gets the sheet of slips (to print) and its CSV; a pupil signs in with a
// slip and must choose their own password; the teacher sees who has signed
// in and hands out a new password to one who forgot (docs/protocol.md,
// "Classes").

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { startServerAndBrowser, newPlayer, api, assertAccessible, assertNoPageErrors } from "./harness.js";

describe("class", () => {
  const suite = startServerAndBrowser();

  test("a teacher prints a class's slips and downloads them; a pupil signs in and chooses a password", async () => {
    const teacher = await newPlayer(suite);
    await api(teacher, "POST", "/api/account/sign-up", { username: "Teacher", password: "correct horse battery" });
    await api(teacher, "POST", "/api/clubs", { name: "Lions 4C", admission: "invitation" });
    await teacher.goto("/club/lions-4c");
    await teacher.locator("#class-card").waitFor();
    await teacher.locator('#class-form [name="names"]').fill("Ann Lee\n\n  Ben, the tall one \nCho\n");
    await teacher.locator('#class-form [name="prefix"]').fill("lions");
    await teacher.getByRole("button", { name: "Create the accounts" }).click();

    // The sheet: one slip per typed name, in order, with its account.
    const slips = teacher.locator("#class-slips .slip");
    await slips.nth(2).waitFor();
    assert.equal(await slips.count(), 3);
    assert.deepEqual(await teacher.locator(".slip-pupil").allTextContents(), ["Ann Lee", "Ben, the tall one", "Cho"]);
    const usernames = await teacher.locator(".slip-username").allTextContents();
    const passwords = await teacher.locator(".slip-password").allTextContents();
    assert.ok(usernames.every((name) => /^lions-[a-z2-9]{4}$/.test(name)), usernames.join(" "));
    assert.ok(passwords.every((p) => /^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/.test(p)), passwords.join(" "));
    assert.match(await slips.first().textContent(), /Sign in at http:\/\/127\.0\.0\.1:\d+\/account\.html/);
    await assertAccessible(teacher, "the club page with a class sheet");

    // The CSV holds the same, the comma in a name quoted.
    const [download] = await Promise.all([teacher.waitForEvent("download"), teacher.locator("#class-csv").click()]);
    assert.equal(download.suggestedFilename(), "lions-4c-class-accounts.csv");
    const lines = (await readFile(await download.path(), "utf8")).trimEnd().split("\r\n");
    assert.equal(lines[0], "pupil,username,password,sign in at");
    assert.equal(lines.length, 4);
    assert.ok(lines[2].startsWith(`"Ben, the tall one",${usernames[1]},${passwords[1]},http://`), lines[2]);

    // Printed, only the slips are on the paper.
    await teacher.emulateMedia({ media: "print" });
    await teacher.evaluate(() => document.body.classList.add("printing-sheet"));
    assert.equal(await teacher.locator("header.site").isVisible(), false);
    assert.equal(await teacher.locator("#class-form").isVisible(), false);
    assert.equal(await teacher.locator("#club-members").isVisible(), false);
    assert.equal(await slips.first().isVisible(), true);
    await teacher.evaluate(() => document.body.classList.remove("printing-sheet"));
    await teacher.emulateMedia({ media: "screen" });

    // The pupil signs in with Ann's slip and must choose a password.
    const ann = await newPlayer(suite);
    await ann.goto("/account.html");
    await ann.locator('#sign-in-form [name="username"]').fill(usernames[0]);
    await ann.locator('#sign-in-form [name="password"]').fill(passwords[0]);
    await ann.getByRole("button", { name: "Sign in" }).click();
    await ann.locator("#first-password").waitFor();
    assert.equal(await ann.locator("#first-password-name").textContent(), usernames[0]);
    assert.equal(await ann.locator("#signed-out").isHidden(), true);
    await assertAccessible(ann, "choosing a first password");
    await ann.locator('#first-password-form [name="new"]').fill("my own chess secret");
    await ann.locator('#first-password-form [name="repeat"]').fill("my own chess secreT");
    await ann.getByRole("button", { name: "Save and sign in" }).click();
    await ann.locator("#account-notice").filter({ hasText: "differ" }).waitFor();
    await ann.locator('#first-password-form [name="repeat"]').fill("my own chess secret");
    await ann.getByRole("button", { name: "Save and sign in" }).click();
    await ann.locator("#account-name").filter({ hasText: usernames[0] }).waitFor();
    await ann.locator("#account-notice").filter({ hasText: "your password is saved" }).waitFor();

    // The teacher sees it, and gives Ben, who lost his slip, a new password.
    await teacher.reload();
    const annItem = teacher.locator(`#class-roster li[data-username="${usernames[0]}"]`);
    await annItem.filter({ hasText: "has signed in" }).waitFor();
    const benItem = teacher.locator(`#class-roster li[data-username="${usernames[1]}"]`);
    assert.match(await benItem.textContent(), /not signed in yet/);
    teacher.once("dialog", (dialog) => dialog.accept());
    await benItem.getByRole("button", { name: "New password" }).click();
    const fresh = teacher.locator("#class-password");
    await fresh.filter({ hasText: `New password for ${usernames[1]}` }).waitFor();
    const renewed = (await fresh.textContent()).match(/: ([a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}) /)[1];
    assert.notEqual(renewed, passwords[1]);
    const ben = await newPlayer(suite);
    const refused = await ben.evaluate(async ({ username, password }) => {
      const res = await fetch("/api/account/sign-in", {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username, password }),
      });
      return { status: res.status, body: await res.json() };
    }, { username: usernames[1], password: passwords[1] });
    assert.equal(refused.status, 401, "the old slip no longer works");
    assertNoPageErrors(teacher, ann, ben);
  });
});
