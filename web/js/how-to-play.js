// The rules page: draws the pieces it names and the header's account link.
import { pieceSvg } from "/js/pieces.js";
import { me } from "/js/api.js";
import { showAccountLink } from "/js/header.js";
import { followLobby } from "/js/lobby-follow.js";
import { Sounds } from "/js/sound.js";

for (const el of document.querySelectorAll("[data-piece]")) {
  el.innerHTML = pieceSvg(el.dataset.piece);
}
// The header keeps saying "Sign in" if the server cannot be asked.
me().then(showAccountLink, () => {});
// A challenge or seek of this person may start while they read.
followLobby({ sounds: new Sounds() });
