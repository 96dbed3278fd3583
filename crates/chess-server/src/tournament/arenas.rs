//! What people do with arenas, whichever door they come through (the
//! lichess API today, the web pages next): create one, join it, withdraw,
//! end it early; and what they see of one, its rows with the standings
//! computed from them. The checks a setting must pass live here, once.

use chess_game::TimeControl;
use chess_live::now_ms;
use chess_store::ratings::Perf;
use chess_store::tournaments::{
    TournamentError, TournamentGame, TournamentPlayer, TournamentRow, TournamentStatus,
};
use chess_store::{Store, StoreError};
use rand::Rng as _;
use uuid::Uuid;

use super::standings::{Standing, standings};

/// The base times an arena may have, in seconds: lichess's choices, from
/// a quarter of a minute to an hour.
pub const BASE_CHOICES_S: [i64; 20] = [
    0, 15, 30, 45, 60, 90, 120, 180, 240, 300, 360, 420, 600, 900, 1200, 1500, 1800, 2400, 3000,
    3600,
];
/// The longest increment, in seconds.
pub const MAX_INCREMENT_S: i64 = 60;
/// The longest arena, in minutes (12 hours).
pub const MAX_MINUTES: i64 = 720;
/// How far ahead an arena may be scheduled.
pub const MAX_SCHEDULE_AHEAD_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// The length of a name, in characters.
pub const NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=30;
/// Tries at a fresh id before giving up (ids are 8 of 62 characters: a
/// clash is already a one-in-billions event).
const ID_TRIES: usize = 5;
const ID_LEN: usize = 8;

/// An arena as its organiser asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArenaSettings {
    pub name: String,
    pub clock_base_s: i64,
    pub clock_increment_s: i64,
    /// How long it runs.
    pub minutes: i64,
    /// Unix ms.
    pub starts_at: i64,
    pub rated: bool,
    pub berserkable: bool,
    pub streaks: bool,
    /// Only this club's members may join; only its leaders create it.
    pub club_id: Option<String>,
    pub min_rating: Option<i64>,
    pub max_rating: Option<i64>,
}

/// A setting that cannot be: what is wrong, in a sentence for the
/// organiser.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadSettings(pub String);

impl ArenaSettings {
    /// Whether these settings make an arena, at `now`.
    ///
    /// # Errors
    /// The first setting that does not.
    pub fn check(&self, now: i64) -> Result<(), BadSettings> {
        let bad = |message: String| Err(BadSettings(message));
        let name_chars = self.name.chars().count();
        if !NAME_CHARS.contains(&name_chars) {
            return bad(format!(
                "name: {} to {} characters, not {name_chars}",
                NAME_CHARS.start(),
                NAME_CHARS.end()
            ));
        }
        if !self
            .name
            .chars()
            .all(|c| c.is_alphanumeric() || " -_'.,!&".contains(c))
        {
            return bad("name: letters, digits, spaces and - _ ' . , ! & only".into());
        }
        if !BASE_CHOICES_S.contains(&self.clock_base_s) {
            return bad(format!(
                "clockTime: one of 0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 6, 7, 10, 15, 20, 25, \
                 30, 40, 50 or 60 minutes, not {} s",
                self.clock_base_s
            ));
        }
        if !(0..=MAX_INCREMENT_S).contains(&self.clock_increment_s) {
            return bad(format!(
                "clockIncrement: 0 to {MAX_INCREMENT_S} seconds, not {}",
                self.clock_increment_s
            ));
        }
        if self.clock_base_s == 0 && self.clock_increment_s == 0 {
            return bad("a clock of 0+0 cannot be played".into());
        }
        if !(1..=MAX_MINUTES).contains(&self.minutes) {
            return bad(format!("minutes: 1 to {MAX_MINUTES}, not {}", self.minutes));
        }
        if self.starts_at > now + MAX_SCHEDULE_AHEAD_MS {
            return bad("startDate: at most 30 days ahead".into());
        }
        if let (Some(floor), Some(ceiling)) = (self.min_rating, self.max_rating)
            && floor > ceiling
        {
            return bad(format!(
                "the rating floor {floor} is above the ceiling {ceiling}"
            ));
        }
        for (name, rating) in [
            ("minRating", self.min_rating),
            ("maxRating", self.max_rating),
        ] {
            if rating.is_some_and(|rating| !(0..=4000).contains(&rating)) {
                return bad(format!("{name}: 0 to 4000"));
            }
        }
        Ok(())
    }

    /// The games' time control.
    pub fn time_control(&self) -> TimeControl {
        time_control_of(self.clock_base_s, self.clock_increment_s)
    }
}

/// The time control of a clock in seconds (one [`ArenaSettings::check`]
/// accepted: within the game crate's bounds).
fn time_control_of(base_s: i64, increment_s: i64) -> TimeControl {
    let ms = |s: i64| u64::try_from(s).unwrap_or(0) * 1000;
    TimeControl::real_time(ms(base_s), ms(increment_s))
        .unwrap_or(TimeControl::real_time(60_000, 0).expect("1+0 is a clock"))
}

/// The name as it is shown: with "Arena" after it (as lichess shows it).
pub fn full_name(name: &str) -> String {
    if name.to_lowercase().ends_with("arena") {
        name.to_owned()
    } else {
        format!("{name} Arena")
    }
}

/// The perf an arena's players are rated in (and join with).
pub fn perf(tournament: &TournamentRow) -> Perf {
    Perf::of(time_control_of(tournament.clock_base_s, tournament.clock_increment_s).speed())
}

/// Why an arena could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error(transparent)]
    Settings(#[from] BadSettings),
    #[error(transparent)]
    Refused(#[from] TournamentError),
}

/// `creator` creates an arena with `settings`.
///
/// # Errors
/// Settings that do not make an arena; a club's arena by someone who does
/// not lead it; the database error.
pub async fn create(
    store: &Store,
    creator: Uuid,
    settings: &ArenaSettings,
) -> Result<TournamentRow, CreateError> {
    let now = now_ms().to_stored();
    settings.check(now)?;
    let starts_at = settings.starts_at.max(now);
    let mut row = TournamentRow {
        id: String::new(),
        name: settings.name.trim().to_owned(),
        created_by: creator,
        club_id: settings.club_id.clone(),
        clock_base_s: settings.clock_base_s,
        clock_increment_s: settings.clock_increment_s,
        starts_at,
        ends_at: starts_at + settings.minutes * 60_000,
        rated: settings.rated,
        berserkable: settings.berserkable,
        streaks: settings.streaks,
        min_rating: settings.min_rating,
        max_rating: settings.max_rating,
        status: TournamentStatus::Created,
        created_at: now,
    };
    for _ in 0..ID_TRIES {
        row.id = new_id();
        match store.create_tournament(&row).await {
            Ok(()) => return Ok(row),
            Err(TournamentError::IdTaken) => continue,
            Err(error) => return Err(error.into()),
        }
    }
    Err(TournamentError::IdTaken.into())
}

fn new_id() -> String {
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(ID_LEN)
        .map(char::from)
        .collect()
}

/// `player` joins arena `id` with their current rating in its perf.
///
/// # Errors
/// The store's refusals ([`TournamentError`]); the database error.
pub async fn join(store: &Store, id: &str, player: Uuid) -> Result<(), TournamentError> {
    let tournament = store
        .tournament(id)
        .await?
        .ok_or(TournamentError::NoSuchTournament)?;
    let now = now_ms().to_stored();
    let rating = store.rating_of(player, perf(&tournament)).await?;
    let rating = rating.as_of(now).rating.round() as i64;
    store.join_tournament(id, player, rating, now).await
}

/// `player` leaves arena `id`: before it starts they are out of it; once it
/// runs they keep their games and score and may join again, and it counts as
/// a pause (lichess's "Pause"), so coming back waits as after a missed first
/// move. The pause is written just after the withdrawal: a node stopping in
/// between leaves a withdrawal without its pause, which only lets that
/// player back sooner.
///
/// # Errors
/// [`TournamentError::NotAPlayer`] when they were not in it (or had left
/// already); the store's other refusals; the database error.
pub async fn withdraw(store: &Store, id: &str, player: Uuid) -> Result<(), TournamentError> {
    if !store.withdraw_from_tournament(id, player).await? {
        return Err(TournamentError::NotAPlayer);
    }
    let tournament = store
        .tournament(id)
        .await?
        .ok_or(TournamentError::NoSuchTournament)?;
    if tournament.status == TournamentStatus::Started {
        let clock = super::plan::arena_clock(&tournament);
        let now = now_ms().to_stored();
        store
            .pause_tournament_player(id, player, |stored| {
                super::director::pause_after_no_start(stored, now, clock)
            })
            .await?;
    }
    Ok(())
}

/// Who created `tournament` (their username) and how many players it
/// has: what a listing shows beside the row.
///
/// # Errors
/// The database error.
pub async fn listed(
    store: &Store,
    tournament: &TournamentRow,
) -> Result<(String, usize), StoreError> {
    let players = store.tournament_players(&tournament.id).await?.len();
    let created_by = store
        .player(tournament.created_by)
        .await?
        .map_or_else(String::new, |player| player.name);
    Ok((created_by, players))
}

/// An arena as it stands: its rows and the standings computed from them.
#[derive(Clone, Debug)]
pub struct ArenaView {
    pub tournament: TournamentRow,
    /// The creator's username.
    pub created_by: String,
    pub players: Vec<TournamentPlayer>,
    pub games: Vec<TournamentGame>,
    /// Best first.
    pub standings: Vec<Standing>,
}

impl ArenaView {
    /// Arena `id` as it stands, if there is one.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn load(store: &Store, id: &str) -> Result<Option<ArenaView>, StoreError> {
        let Some(tournament) = store.tournament(id).await? else {
            return Ok(None);
        };
        let players = store.tournament_players(id).await?;
        let games = store.tournament_games(id).await?;
        let standings = standings(&tournament, &players, &games)?;
        let created_by = store
            .player(tournament.created_by)
            .await?
            .map_or_else(String::new, |player| player.name);
        Ok(Some(ArenaView {
            tournament,
            created_by,
            players,
            games,
            standings,
        }))
    }

    /// Games still being played.
    pub fn ongoing(&self) -> usize {
        self.games.iter().filter(|game| !game.finished).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ArenaSettings {
        ArenaSettings {
            name: "Club night".into(),
            clock_base_s: 180,
            clock_increment_s: 2,
            minutes: 45,
            starts_at: 1_000,
            rated: true,
            berserkable: true,
            streaks: true,
            club_id: None,
            min_rating: None,
            max_rating: None,
        }
    }

    fn refusal(change: impl FnOnce(&mut ArenaSettings)) -> String {
        let mut settings = settings();
        change(&mut settings);
        settings.check(0).expect_err("refused").0
    }

    #[test]
    fn sound_settings_pass() {
        assert_eq!(settings().check(0), Ok(()));
        let mut bullet = settings();
        bullet.clock_base_s = 0;
        bullet.clock_increment_s = 1;
        assert_eq!(bullet.check(0), Ok(()), "0+1 is a clock");
    }

    #[test]
    fn each_bad_setting_is_named() {
        assert!(refusal(|s| s.name = "A".into()).starts_with("name"));
        assert!(refusal(|s| s.name = "x".repeat(31)).starts_with("name"));
        assert!(refusal(|s| s.name = "<script>".into()).starts_with("name"));
        assert!(refusal(|s| s.clock_base_s = 100).starts_with("clockTime"));
        assert!(refusal(|s| s.clock_increment_s = 61).starts_with("clockIncrement"));
        assert!(refusal(|s| s.clock_increment_s = -1).starts_with("clockIncrement"));
        assert!(
            refusal(|s| {
                s.clock_base_s = 0;
                s.clock_increment_s = 0;
            })
            .contains("0+0")
        );
        assert!(refusal(|s| s.minutes = 0).starts_with("minutes"));
        assert!(refusal(|s| s.minutes = 721).starts_with("minutes"));
        assert!(refusal(|s| s.starts_at = MAX_SCHEDULE_AHEAD_MS + 1).starts_with("startDate"));
        assert!(
            refusal(|s| {
                s.min_rating = Some(1800);
                s.max_rating = Some(1600);
            })
            .contains("above the ceiling")
        );
        assert!(refusal(|s| s.max_rating = Some(5000)).starts_with("maxRating"));
    }

    #[test]
    fn every_base_choice_is_a_clock_the_games_accept() {
        for base in BASE_CHOICES_S {
            let increment = if base == 0 { 1 } else { 0 };
            let clock = time_control_of(base, increment);
            assert_eq!(
                clock.initial_ms(),
                Some(u64::try_from(base).unwrap() * 1000)
            );
        }
    }

    #[test]
    fn names_get_arena_once() {
        assert_eq!(full_name("Club night"), "Club night Arena");
        assert_eq!(full_name("Friday Arena"), "Friday Arena");
    }

    #[test]
    fn ids_are_short_and_url_safe() {
        let id = new_id();
        assert_eq!(id.len(), ID_LEN);
        assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(new_id(), id);
    }
}
