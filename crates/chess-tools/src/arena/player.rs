//! One pupil in the arena, behaving as the tournament page and the game
//! page do: while waiting, ask the arena for their own state every two
//! seconds (which is what keeps them in the pool); play each game they are
//! paired into to its end over the game socket; come back. When their node
//! does not answer they go to the next one, as a load balancer would send
//! them, and keep trying until one answers.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::client::{Api, CallError, Person};
use crate::moves::random_move;

/// How often a waiting pupil asks for the arena, as the tournament page does.
const POLL: Duration = Duration::from_secs(2);
/// How long a pupil waits before trying again when no node answered.
const RETRY: Duration = Duration::from_millis(300);
/// How long after the arena's end a pupil's games may still go on (they are
/// resigned at the first turn after the end) before the pupil gives up.
const GIVE_UP_AFTER_END_MS: i64 = 4 * 60_000;
/// Refusals in one game after which a pupil only moves (a resignation or
/// an offer the server keeps refusing must not be sent for ever).
const MAX_REFUSALS: u32 = 5;

/// A pupil of the class, signed in.
#[derive(Clone, Debug)]
pub struct Pupil {
    /// Their player id, as the stored rows name them.
    pub id: String,
    pub username: String,
    pub person: Person,
}

/// The arena the pupils play in.
#[derive(Clone, Debug)]
pub struct Arena {
    pub id: String,
    /// Unix ms.
    pub starts_at: i64,
    /// Unix ms.
    pub ends_at: i64,
}

/// The servers' doors in the order this pupil tries them.
#[derive(Clone, Debug)]
pub struct Doors {
    apis: Arc<Vec<Api>>,
    at: usize,
}

impl Doors {
    /// `apis` (one per node), starting at `first` (modulo their number).
    pub fn new(apis: Arc<Vec<Api>>, first: usize) -> Doors {
        let at = first % apis.len().max(1);
        Doors { apis, at }
    }

    fn api(&self) -> &Api {
        &self.apis[self.at]
    }

    /// The next node: this one did not answer.
    fn next(&mut self) {
        self.at = (self.at + 1) % self.apis.len();
    }
}

/// What a pupil saw of one of their games at its end.
#[derive(Clone, Debug)]
pub struct SeenGame {
    pub game_id: String,
    /// `"white"` or `"black"`.
    pub color: String,
    /// The game's result as the last message showed it (`null`: the pupil
    /// gave up before the end).
    pub result: Value,
    /// Plies on the board at the end.
    pub plies: u64,
    /// Whether the game showed this pupil as having berserked.
    pub berserked: bool,
}

/// Everything one pupil saw.
#[derive(Clone, Debug)]
pub struct PlayerLog {
    pub player_id: String,
    pub username: String,
    pub games: Vec<SeenGame>,
    /// What went wrong for them that the server should not have done
    /// (refusals while it was up, a game that never ended).
    pub problems: Vec<String>,
}

/// The current unix time in ms (the servers run on this machine's clock).
pub fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// Plays `pupil`'s arena until it is over and their last game has ended.
pub async fn attend(arena: Arc<Arena>, mut doors: Doors, pupil: Pupil, seed: u64) -> PlayerLog {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut log = PlayerLog {
        player_id: pupil.id.clone(),
        username: pupil.username.clone(),
        games: Vec::new(),
        problems: Vec::new(),
    };
    let path = format!("/api/arenas/{}", arena.id);
    let mut played: HashSet<String> = HashSet::new();
    loop {
        if unix_ms() > arena.ends_at + GIVE_UP_AFTER_END_MS {
            log.problems
                .push("the arena was still not over 4 minutes after its end".to_owned());
            return log;
        }
        let view = match doors.api().get(&path, &pupil.person).await {
            Ok(view) => view,
            Err(CallError(code)) if is_unreachable(&code) => {
                doors.next();
                tokio::time::sleep(RETRY).await;
                continue;
            }
            Err(CallError(code)) => {
                log.problems
                    .push(format!("the arena's page answered {code}"));
                tokio::time::sleep(POLL).await;
                continue;
            }
        };
        if let Some(game_id) = view["me"]["game_id"].as_str()
            && !played.contains(game_id)
        {
            played.insert(game_id.to_owned());
            let seen = play(&arena, &mut doors, &pupil.person, game_id, &mut rng).await;
            if seen.result.is_null() {
                log.problems.push(format!(
                    "game {game_id} had not ended when its player gave up"
                ));
            }
            log.games.push(seen);
            // Straight back to the arena's page, as the game page offers.
            continue;
        }
        if view["status"] == "finished" {
            return log;
        }
        tokio::time::sleep(POLL).await;
    }
}

fn is_unreachable(code: &str) -> bool {
    // A node that is down refuses the connection; one that is dying may
    // answer with a body that is not JSON.
    code == "http_unreachable" || code.ends_with("_bad_json")
}

/// How a pupil means to end one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    Resign,
    OfferDraw,
    /// Play on: checkmate, an automatic draw or a flag ends it.
    PlayOn,
}

/// A pupil's intentions for one game, drawn when it starts.
#[derive(Clone, Copy, Debug)]
struct Plan {
    ending: Ending,
    /// From this ply on they resign or offer a draw.
    end_ply: u64,
    /// Whether they accept a draw offered to them.
    accepts_draws: bool,
    berserk: bool,
    /// Whether they resign at their first turn after the arena's end (its
    /// games no longer count).
    resigns_at_end: bool,
    think: Duration,
}

impl Plan {
    fn draw(rng: &mut StdRng) -> Plan {
        let ending = match rng.random_range(0..100) {
            0..55 => Ending::Resign,
            55..90 => Ending::OfferDraw,
            _ => Ending::PlayOn,
        };
        Plan {
            ending,
            // Around every threshold of the score sheet: quick draws under
            // 20 plies, berserk bonus from 14, long draws from 60.
            end_ply: rng.random_range(2..=100),
            accepts_draws: rng.random_bool(0.75),
            berserk: rng.random_bool(0.15),
            resigns_at_end: true,
            think: Duration::from_millis(rng.random_range(40..=250)),
        }
    }
}

/// What the pupil sends when its moment comes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
    Berserk,
    AnswerDraw,
    /// Their turn at this ply: a move, or the end they planned.
    Turn(u64),
}

/// What the pupil knows of the game from the last state or event.
#[derive(Debug, Default)]
struct Board {
    /// `"white"` or `"black"`, from the full state.
    color: String,
    fen: String,
    dests: Map<String, Value>,
    finished: bool,
    result: Value,
    draw_offer_from: Option<String>,
    berserk: Value,
}

impl Board {
    fn absorb(&mut self, message: &Value) {
        if let Some(seat) = message["seat"].as_str() {
            self.color = seat.to_owned();
        }
        if let Some(fen) = message["fen"].as_str() {
            self.fen = fen.to_owned();
        }
        self.dests = message["dests"].as_object().cloned().unwrap_or_default();
        self.finished = message["status"] == "finished";
        self.result = message["result"].clone();
        self.draw_offer_from = message["offers"]["draw"].as_str().map(str::to_owned);
        if message["type"] == "state" {
            self.berserk = message["berserk"].clone();
        }
        let event = &message["event"];
        if event["kind"] == "berserk"
            && let Some(color) = event["color"].as_str()
            && self.berserk.is_object()
        {
            self.berserk[color] = json!(true);
        }
    }

    /// Plies on the board, from the FEN's move number and side to move.
    fn ply(&self) -> u64 {
        let mut fields = self.fen.split(' ');
        let black_to_move = fields.nth(1) == Some("b");
        let full_moves: u64 = fields.nth(3).and_then(|n| n.parse().ok()).unwrap_or(1);
        (full_moves.saturating_sub(1)) * 2 + u64::from(black_to_move)
    }

    fn berserked(&self) -> bool {
        self.berserk[self.color.as_str()] == true
    }
}

/// Plays game `game_id` to its end as `person`: what they saw.
async fn play(
    arena: &Arena,
    doors: &mut Doors,
    person: &Person,
    game_id: &str,
    rng: &mut StdRng,
) -> SeenGame {
    let mut plan = Plan::draw(rng);
    let mut board = Board::default();
    let mut offered = false;
    let mut refusals = 0_u32;
    'connection: loop {
        if unix_ms() > arena.ends_at + GIVE_UP_AFTER_END_MS {
            break;
        }
        let Ok(mut socket) = doors.api().socket(game_id, person).await else {
            doors.next();
            tokio::time::sleep(RETRY).await;
            continue;
        };
        if !socket
            .send(&json!({ "type": "hello", "version": null }))
            .await
        {
            continue;
        }
        let mut due: Option<(Instant, Action)> = None;
        let mut acted_for: Option<u64> = None;
        loop {
            let message = match &due {
                Some((at, _)) => tokio::time::timeout_at(*at, socket.recv()).await.ok(),
                None => Some(socket.recv().await),
            };
            let message = match message {
                // The moment of the scheduled action.
                None => {
                    let Some((_, action)) = due.take() else {
                        continue;
                    };
                    let sent = act(
                        &mut socket,
                        &board,
                        &mut plan,
                        action,
                        arena,
                        &mut offered,
                        rng,
                    )
                    .await;
                    if let Some(ply) = sent {
                        acted_for = Some(ply);
                    }
                    continue;
                }
                Some(Ok(message)) => message,
                // The node went away (or went silent): another door.
                Some(Err(_)) => {
                    doors.next();
                    continue 'connection;
                }
            };
            match message["type"].as_str() {
                Some("state" | "event") => {
                    board.absorb(&message);
                    if board.finished {
                        socket.close().await;
                        break 'connection;
                    }
                    due = next_due(&board, &plan, due, acted_for);
                }
                // A refusal (a move that crossed the opponent's resignation,
                // an offer too soon): start again from a full state.
                Some("error") => {
                    refusals += 1;
                    if refusals >= MAX_REFUSALS {
                        // Whatever was refused, moves alone end a game.
                        plan.ending = Ending::PlayOn;
                        plan.resigns_at_end = false;
                    }
                    due = None;
                    acted_for = None;
                    if !socket
                        .send(&json!({ "type": "hello", "version": null }))
                        .await
                    {
                        continue 'connection;
                    }
                }
                _ => {}
            }
        }
    }
    SeenGame {
        game_id: game_id.to_owned(),
        color: board.color.clone(),
        result: if board.finished {
            board.result.clone()
        } else {
            Value::Null
        },
        plies: board.ply(),
        berserked: board.berserked(),
    }
}

/// What to do next after the board changed: an answer at once, the turn
/// after thinking, or what was already due.
fn next_due(
    board: &Board,
    plan: &Plan,
    due: Option<(Instant, Action)>,
    acted_for: Option<u64>,
) -> Option<(Instant, Action)> {
    let now = Instant::now();
    let ply = board.ply();
    let opponent_offers = board
        .draw_offer_from
        .as_deref()
        .is_some_and(|from| from != board.color);
    if opponent_offers {
        return Some((now, Action::AnswerDraw));
    }
    let berserk_allowed = board.berserk.is_object();
    if plan.berserk && berserk_allowed && !board.berserked() && ply < 2 {
        return Some((now, Action::Berserk));
    }
    if board.dests.is_empty() || acted_for == Some(ply) {
        return None;
    }
    match due {
        Some((at, Action::Turn(due_ply))) if due_ply == ply => Some((at, Action::Turn(ply))),
        _ => Some((now + plan.think, Action::Turn(ply))),
    }
}

/// Sends what `action` calls for; the ply it played at, when it moved or
/// resigned.
async fn act(
    socket: &mut crate::client::Socket,
    board: &Board,
    plan: &mut Plan,
    action: Action,
    arena: &Arena,
    offered: &mut bool,
    rng: &mut StdRng,
) -> Option<u64> {
    match action {
        Action::Berserk => {
            // Once: a refusal must not make them ask again and again.
            plan.berserk = false;
            socket.send(&json!({ "type": "berserk" })).await;
            None
        }
        Action::AnswerDraw => {
            let answer = if plan.accepts_draws {
                "draw_accept"
            } else {
                "draw_decline"
            };
            socket.send(&json!({ "type": answer })).await;
            None
        }
        Action::Turn(ply) => {
            let over = plan.resigns_at_end && unix_ms() >= arena.ends_at;
            let time_to_end = ply >= plan.end_ply && ply >= 2;
            if ply >= 2 && (over || (time_to_end && plan.ending == Ending::Resign)) {
                socket.send(&json!({ "type": "resign" })).await;
                return Some(ply);
            }
            if time_to_end && plan.ending == Ending::OfferDraw && !*offered {
                *offered = true;
                socket.send(&json!({ "type": "draw_offer" })).await;
            }
            let uci = random_move(&board.dests, &board.fen, rng)?;
            socket
                .send(&json!({ "type": "move", "uci": uci, "ply": ply }))
                .await;
            Some(ply)
        }
    }
}
