// Takes a person to their game the moment it starts, from any page: someone
// joined their seek, or opened their challenge link. The server tells the
// person's lobby sockets (`game_started`, docs/protocol.md "Lobby socket").

import * as api from "./api.js";
import { ReconnectingSocket } from "./socket.js";

/** sessionStorage key: the game this tab was sent to, so a background tab's title can say it started. */
export const STARTED_KEY = "chess.started";

/**
 * Goes to the game of a `game_started` message: plays the start sound (the
 * page the person interacted with is the one allowed to), and when the tab
 * is in the background, marks it so the game page's title says so.
 */
export function goToStartedGame(msg, { sounds = null, doc = document, storage = sessionStorage, go = (url) => location.assign(url) } = {}) {
  sounds?.play("gameStart");
  if (doc.hidden) {
    storage.setItem(STARTED_KEY, msg.game_id);
    doc.title = `Your game started · ${doc.title}`;
  }
  go(msg.url);
}

/**
 * Opens the lobby socket on a page that has none of its own and follows
 * `game_started`. `stay(gameId)` returning true keeps the person where they
 * are (they are playing another game on this page).
 */
export function followLobby({ sounds = null, stay = () => false, onMessage = null } = {}) {
  const socket = new ReconnectingSocket(api.socketUrl("/api/lobby/socket"), {
    hello: () => ({ type: "ping", t: Date.now() }),
    onStatus: (status) => (document.body.dataset.lobby = status),
    onMessage: (msg) => {
      if (msg.type === "game_started" && !stay(msg.game_id)) goToStartedGame(msg, { sounds });
      else onMessage?.(msg);
    },
  });
  socket.connect();
  return socket;
}
