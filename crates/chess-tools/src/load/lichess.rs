//! `--api lichess`: the same games played through the lichess Board API
//! (`docs/lichess-api.md`), so any server that implements it can be
//! measured with this tool.
//!
//! Each slot has two accounts with `board:play` tokens and keeps their event
//! streams open. A game: White challenges Black by name (no clock), Black
//! accepts, both open `/api/board/game/stream/{id}` and play random legal
//! moves (computed here with the rules crate: the API sends no legal
//! destinations). A move's *ack* is its `POST .../move/{uci}` round trip;
//! *opponent* is the time until the opponent's stream shows it.
//!
//! Accounts: `--lichess-tokens FILE` (lines `username token`, two per slot)
//! for another server; without it the tool signs accounts up on this server,
//! from several loopback addresses (sign-ups are limited per address).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use chess_rules::Position;
use rand::seq::IndexedRandom;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::load::game::SentAt;
use crate::load::game::{Failure, Rules};
use crate::load::report::{Ending, Recorder};

/// Longest wait for a line the game needs.
const LINE_TIMEOUT: Duration = Duration::from_secs(15);
/// Times a request waits out a `429` before the game counts as failed.
const RATE_LIMIT_WAITS: usize = 4;
/// Accounts signed up from one loopback address (the server allows 5 an hour).
const SIGN_UPS_PER_ADDRESS: usize = 4;

/// One account of the run and the server it plays on.
#[derive(Clone, Debug)]
pub struct Account {
    pub username: String,
    pub token: String,
    pub base_url: String,
    /// The session cookie of a signed-up account (`None` for one read from
    /// `--lichess-tokens`).
    pub cookie: Option<String>,
}

/// Reads `username token` lines.
///
/// # Errors
/// The file cannot be read or a line is not two words.
pub fn read_tokens(path: &std::path::Path, base_urls: &[String]) -> Result<Vec<Account>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(index, line)| {
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some(username), Some(token), None) => Ok(Account {
                    username: username.to_owned(),
                    token: token.to_owned(),
                    base_url: base_urls[index % base_urls.len()].clone(),
                    cookie: None,
                }),
                _ => Err(format!(
                    "{}: line {} is not `username token`",
                    path.display(),
                    index + 1
                )),
            }
        })
        .collect()
}

/// Signs `count` accounts up on this server and gives each a token.
///
/// # Errors
/// The code of the first failed request.
pub async fn sign_up(count: usize, base_urls: &[String]) -> Result<Vec<Account>, Failure> {
    let run: u32 = rand::random::<u32>() % 0x10_0000;
    let mut accounts = Vec::with_capacity(count);
    let mut clients: HashMap<usize, reqwest::Client> = HashMap::new();
    for index in 0..count {
        let address = index / SIGN_UPS_PER_ADDRESS;
        let client = match clients.get(&address) {
            Some(client) => client.clone(),
            None => {
                // 127.0.1.0 and on: every one of them is this machine.
                let octets = u32::try_from(address).unwrap_or(0) + 256;
                let local = Ipv4Addr::new(127, 0, (octets >> 8) as u8, (octets & 0xff) as u8);
                let client = reqwest::Client::builder()
                    .local_address(IpAddr::V4(local))
                    .build()
                    .map_err(|_| Failure::new("http_client"))?;
                clients.insert(address, client.clone());
                client
            }
        };
        let base_url = &base_urls[index % base_urls.len()];
        let username = format!("l{run:05x}{index}");
        let reply = client
            .post(format!("{base_url}/api/account/sign-up"))
            .json(&json!({ "username": username, "password": "load test password" }))
            .send()
            .await
            .map_err(|_| Failure::new("http_unreachable"))?;
        if reply.status().as_u16() != 201 {
            return Err(Failure(format!("sign_up_{}", reply.status().as_u16())));
        }
        let cookie = reply
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|value| value.split(';').next())
            .find(|pair| pair.starts_with("chess_session="))
            .ok_or_else(|| Failure::new("no_session"))?
            .to_owned();
        let reply = client
            .post(format!("{base_url}/api/account/tokens"))
            .header("cookie", &cookie)
            .json(&json!({ "description": "load tool", "scopes": ["board:play"] }))
            .send()
            .await
            .map_err(|_| Failure::new("http_unreachable"))?;
        if reply.status().as_u16() != 201 {
            return Err(Failure(format!("token_{}", reply.status().as_u16())));
        }
        let body: Value = reply
            .json()
            .await
            .map_err(|_| Failure::new("http_bad_json"))?;
        let token = body["token"]
            .as_str()
            .ok_or_else(|| Failure::new("http_bad_json"))?;
        accounts.push(Account {
            username,
            token: token.to_owned(),
            base_url: base_url.clone(),
            cookie: Some(cookie),
        });
    }
    Ok(accounts)
}

/// An NDJSON stream read by its own task: its JSON lines, in order.
#[derive(Debug)]
struct Lines(mpsc::UnboundedReceiver<Value>);

impl Lines {
    async fn open(http: &reqwest::Client, account: &Account, path: &str) -> Result<Lines, Failure> {
        let mut response = http
            .get(format!("{}{path}", account.base_url))
            .bearer_auth(&account.token)
            .send()
            .await
            .map_err(|_| Failure::new("http_unreachable"))?;
        if !response.status().is_success() {
            return Err(Failure(format!("stream_{}", response.status().as_u16())));
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut buffer = Vec::new();
            while let Ok(Some(chunk)) = response.chunk().await {
                buffer.extend_from_slice(&chunk);
                while let Some(end) = buffer.iter().position(|byte| *byte == b'\n') {
                    let line: Vec<u8> = buffer.drain(..=end).collect();
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match serde_json::from_slice(&line) {
                        Ok(value) => {
                            if sender.send(value).is_err() {
                                return;
                            }
                        }
                        Err(_) => return,
                    }
                }
            }
        });
        Ok(Lines(receiver))
    }

    async fn next(&mut self) -> Result<Value, Failure> {
        match tokio::time::timeout(LINE_TIMEOUT, self.0.recv()).await {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(Failure::new("stream_ended")),
            Err(_) => Err(Failure::new("stream_timeout")),
        }
    }

    async fn next_of(&mut self, kind: &str) -> Result<Value, Failure> {
        loop {
            let line = self.next().await?;
            if line["type"] == kind {
                return Ok(line);
            }
        }
    }
}

/// Two accounts that play game after game, with their event streams.
#[derive(Debug)]
pub struct Pair {
    http: reqwest::Client,
    accounts: [Account; 2],
    events: [Lines; 2],
    games: u64,
}

impl Pair {
    /// Opens both accounts' event streams.
    ///
    /// # Errors
    /// A stream that does not open.
    pub async fn new(http: reqwest::Client, accounts: [Account; 2]) -> Result<Pair, Failure> {
        let first = Lines::open(&http, &accounts[0], "/api/stream/event").await?;
        let second = Lines::open(&http, &accounts[1], "/api/stream/event").await?;
        Ok(Pair {
            http,
            accounts,
            events: [first, second],
            games: 0,
        })
    }

    /// A POST that waits out the server's `429` (its `Retry-After`) a few
    /// times: creating games is limited per player, and a pair that plays
    /// fast meets the limit; the waits are counted, not failures.
    async fn post(
        &self,
        account: &Account,
        path: &str,
        form: &[(&str, &str)],
        recorder: &Recorder,
    ) -> Result<Value, Failure> {
        for _ in 0..RATE_LIMIT_WAITS {
            match self.post_once(account, path, form).await {
                Ok(value) => return Ok(value),
                Err((_, Some(wait))) => {
                    recorder.error("rate_limited_wait");
                    tokio::time::sleep(wait).await;
                }
                Err((failure, None)) => return Err(failure),
            }
        }
        Err(Failure::new("lichess_429"))
    }

    /// One POST; a `429` comes with how long to wait.
    async fn post_once(
        &self,
        account: &Account,
        path: &str,
        form: &[(&str, &str)],
    ) -> Result<Value, (Failure, Option<Duration>)> {
        let failed = |code: &str| (Failure::new(code), None);
        let body = serde_urlencoded::to_string(form).map_err(|_| failed("bad_form"))?;
        let response = self
            .http
            .post(format!("{}{path}", account.base_url))
            .bearer_auth(&account.token)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|_| failed("http_unreachable"))?;
        let status = response.status().as_u16();
        if status == 429 {
            let wait = response
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.parse::<u64>().ok())
                .unwrap_or(1);
            return Err((Failure::new("lichess_429"), Some(Duration::from_secs(wait))));
        }
        if status != 200 {
            return Err(failed(&format!("lichess_{status}")));
        }
        response.json().await.map_err(|_| failed("http_bad_json"))
    }

    /// Plays one game (the accounts take turns to be White), recording it.
    pub async fn play_game(&mut self, rules: Rules, recorder: &Recorder) -> Ending {
        recorder.game_started();
        let ending = match self.play(rules, recorder).await {
            Ok(ending) => ending,
            Err(Failure(code)) => {
                recorder.error(&code);
                Ending::Failed
            }
        };
        recorder.game_ended(ending.clone());
        ending
    }

    async fn play(&mut self, rules: Rules, recorder: &Recorder) -> Result<Ending, Failure> {
        let white = usize::from(self.games % 2 == 1);
        let black = 1 - white;
        self.games += 1;
        let (white_account, black_account) =
            (self.accounts[white].clone(), self.accounts[black].clone());
        let created = self
            .post(
                &white_account,
                &format!("/api/challenge/{}", black_account.username),
                &[("color", "white"), ("rated", "false")],
                recorder,
            )
            .await?;
        let challenge = created.get("challenge").unwrap_or(&created);
        let challenge_id = challenge["id"]
            .as_str()
            .ok_or_else(|| Failure::new("http_bad_json"))?
            .to_owned();
        self.post(
            &black_account,
            &format!("/api/challenge/{challenge_id}/accept"),
            &[],
            recorder,
        )
        .await?;
        let started = self.events[white].next_of("gameStart").await?;
        let game_id = started["game"]["gameId"]
            .as_str()
            .or_else(|| started["game"]["id"].as_str())
            .ok_or_else(|| Failure::new("http_bad_json"))?
            .to_owned();
        self.events[black].next_of("gameStart").await?;
        let path = format!("/api/board/game/stream/{game_id}");
        let sent_at = SentAt::default();
        let mut seats = Vec::new();
        for (account, color) in [(white_account, 0usize), (black_account, 1)] {
            let stream = Lines::open(&self.http, &account, &path).await?;
            seats.push(Seat {
                http: self.http.clone(),
                account,
                parity: color,
                stream,
                game_id: game_id.clone(),
            });
        }
        let black_seat = seats.pop().ok_or_else(|| Failure::new("setup"))?;
        let white_seat = seats.pop().ok_or_else(|| Failure::new("setup"))?;
        let _seated = recorder.game_seated();
        let (white_ending, _) = tokio::try_join!(
            white_seat.play(rules, &sent_at, recorder),
            black_seat.play(rules, &sent_at, recorder)
        )?;
        Ok(white_ending)
    }
}

struct Seat {
    http: reqwest::Client,
    account: Account,
    /// 0 for White (moves on even plies), 1 for Black.
    parity: usize,
    stream: Lines,
    game_id: String,
}

impl Seat {
    async fn play(
        mut self,
        rules: Rules,
        sent_at: &SentAt,
        recorder: &Recorder,
    ) -> Result<Ending, Failure> {
        let mut seen = 0;
        loop {
            let line = self.stream.next().await?;
            let state = match line["type"].as_str() {
                Some("gameFull") => &line["state"],
                Some("gameState") => &line,
                _ => continue,
            };
            let moves: Vec<&str> = state["moves"]
                .as_str()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            let status = state["status"].as_str().unwrap_or("");
            if moves.len() > seen {
                let ply = moves.len() - 1;
                if ply % 2 != self.parity
                    && let Some(sent) = sent_at.get(ply)
                {
                    recorder.broadcast_seen(sent.elapsed());
                }
                seen = moves.len();
            }
            if status != "started" && status != "created" {
                return Ok(if status == "resign" && moves.len() >= rules.max_plies {
                    Ending::PlyLimit
                } else {
                    Ending::Rule(status.to_owned())
                });
            }
            if moves.len() % 2 != self.parity {
                continue;
            }
            if moves.len() >= rules.max_plies {
                self.post("resign").await?;
                continue;
            }
            let think = rules.think.draw(&mut rand::rng());
            if !think.is_zero() {
                tokio::time::sleep(think).await;
            }
            let uci = random_move(&moves).ok_or_else(|| Failure::new("no_legal_move"))?;
            let sent = Instant::now();
            sent_at.set(moves.len(), sent);
            recorder.move_sent();
            self.post(&format!("move/{uci}")).await?;
            recorder.acknowledged(sent.elapsed());
        }
    }

    async fn post(&self, action: &str) -> Result<(), Failure> {
        let response = self
            .http
            .post(format!(
                "{}/api/board/game/{}/{action}",
                self.account.base_url, self.game_id
            ))
            .bearer_auth(&self.account.token)
            .send()
            .await
            .map_err(|_| Failure::new("http_unreachable"))?;
        match response.status().as_u16() {
            200 => Ok(()),
            status => Err(Failure(format!("lichess_{status}"))),
        }
    }
}

/// A uniformly random legal move after `moves` (UCI) from the start.
fn random_move(moves: &[&str]) -> Option<String> {
    let mut position = Position::startpos();
    for uci in moves {
        let played = position.parse_uci(uci).ok()?;
        position = position.play(&played).ok()?;
    }
    let legal = position.legal_moves();
    let choice = legal.choose(&mut rand::rng())?;
    Some(choice.to_uci().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_moves_are_legal_after_the_moves_so_far() {
        let moves = ["e2e4", "e7e5", "g1f3"];
        for _ in 0..50 {
            let uci = random_move(&moves).expect("black has moves");
            let mut position = Position::startpos();
            for played in moves.iter().copied().chain(std::iter::once(uci.as_str())) {
                let parsed = position.parse_uci(played).expect("parses");
                position = position.play(&parsed).expect("legal");
            }
        }
        assert_eq!(
            random_move(&["f2f3", "e7e5", "g2g4", "d8h4"]),
            None,
            "mate: no move"
        );
    }
}
