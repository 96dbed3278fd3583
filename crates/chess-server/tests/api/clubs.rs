//! Clubs through the web's routes and lichess's team routes, on both
//! databases: creating one and the refusals, joining at once, on request
//! and by invitation, the leaders' answers, a club always keeping a leader,
//! and a club's arena that only its members may join.

use serde_json::{Value, json};

use crate::helpers::{Guest, TestApp};
use crate::lichess::error_text;
use crate::on_both_backends;

impl TestApp {
    async fn club_post(&self, who: &Guest, path: &str, body: Option<Value>) -> (u16, Value) {
        self.send("POST", path, Some(&who.cookie), body.map(|b| b.to_string()))
            .await
    }

    async fn account_named(&self, name: &str) -> Guest {
        self.sign_up(&self.guest().await, name).await
    }
}

on_both_backends!(
    clubs_admit_openly_on_request_and_by_invitation,
    |app: TestApp| async move {
        let alice = app.account_named("Alice").await;
        let bob = app.account_named("Bob").await;
        let carol = app.account_named("Carol").await;
        let guest = app.guest().await;

        let club =
            json!({ "name": "Chess Club 7B", "description": "Tuesdays", "admission": "request" });
        let (status, body) = app
            .club_post(&guest, "/api/clubs", Some(club.clone()))
            .await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (401, &json!("not_signed_in"))
        );
        let (status, created) = app.club_post(&alice, "/api/clubs", Some(club)).await;
        assert_eq!(status, 201, "{created}");
        assert_eq!(created["id"], "chess-club-7b");
        assert_eq!(created["url"], "/club/chess-club-7b");
        let (status, body) = app
            .club_post(
                &bob,
                "/api/clubs",
                Some(json!({ "name": "chess club 7b", "admission": "open" })),
            )
            .await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (409, &json!("club_name_taken"))
        );
        for bad in [
            json!({ "name": "x", "admission": "open" }),
            json!({ "name": "<b>", "admission": "open" }),
            json!({ "name": "Fine", "admission": "everyone" }),
        ] {
            let (status, body) = app.club_post(&bob, "/api/clubs", Some(bad.clone())).await;
            assert_eq!(
                (status, &body["error"]["code"]),
                (422, &json!("bad_club")),
                "{bad}"
            );
        }
        assert_eq!(app.get_text("/club/chess-club-7b").await.0, 200);
        assert_eq!(app.get_text("/club/no-such-club").await.0, 404);

        // On request: Bob asks, Alice (the leader) accepts.
        let path = "/api/clubs/chess-club-7b";
        let (status, joined) = app
            .club_post(
                &bob,
                &format!("{path}/join"),
                Some(json!({ "message": "I am in 7B" })),
            )
            .await;
        assert_eq!((status, &joined), (200, &json!({ "joined": "requested" })));
        let (_, seen_by_bob) = app.get(path, Some(&bob.cookie)).await;
        assert_eq!(
            seen_by_bob["me"],
            json!({ "signed_in": true, "member": false, "leader": false })
        );
        assert!(
            seen_by_bob.get("requests").is_none(),
            "only leaders see requests"
        );
        let (_, seen_by_alice) = app.get(path, Some(&alice.cookie)).await;
        assert_eq!(seen_by_alice["requests"][0]["username"], "Bob");
        assert_eq!(seen_by_alice["requests"][0]["message"], "I am in 7B");
        let (status, _) = app
            .club_post(&carol, &format!("{path}/requests/Bob/accept"), None)
            .await;
        assert_eq!(status, 403, "only a leader answers");
        let (status, _) = app
            .club_post(&alice, &format!("{path}/requests/Bob/accept"), None)
            .await;
        assert_eq!(status, 204);
        let (status, _) = app
            .club_post(&alice, &format!("{path}/requests/Bob/accept"), None)
            .await;
        assert_eq!(status, 404, "answered once");
        let (_, club) = app.get(path, Some(&bob.cookie)).await;
        assert_eq!(club["me"]["member"], true);
        let names: Vec<&str> = club["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["username"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Alice", "Bob"], "leaders first");

        // A club always has a leader.
        let (status, body) = app.club_post(&alice, &format!("{path}/leave"), None).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (409, &json!("last_leader"))
        );
        let (status, _) = app
            .club_post(
                &alice,
                &format!("{path}/members/Bob/leader"),
                Some(json!({ "leader": true })),
            )
            .await;
        assert_eq!(status, 204);
        let (status, _) = app.club_post(&alice, &format!("{path}/leave"), None).await;
        assert_eq!(status, 204, "Bob leads now");
        let (_, club) = app.get(path, Some(&bob.cookie)).await;
        assert_eq!(
            club["members"],
            json!([{ "username": "Bob", "leader": true, "joined_at": club["members"][0]["joined_at"] }])
        );

        // By invitation: the link's code admits; without it, nothing.
        let (status, secret) = app
            .club_post(
                &carol,
                "/api/clubs",
                Some(json!({ "name": "Family", "admission": "invitation" })),
            )
            .await;
        assert_eq!(status, 201, "{secret}");
        let (_, family) = app.get("/api/clubs/family", Some(&carol.cookie)).await;
        let invite = family["invite_url"]
            .as_str()
            .expect("leaders see the link")
            .to_owned();
        let code = invite.split("code=").nth(1).unwrap().to_owned();
        let (status, body) = app.club_post(&bob, "/api/clubs/family/join", None).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (403, &json!("wrong_invitation"))
        );
        let (status, body) = app
            .club_post(
                &bob,
                "/api/clubs/family/join",
                Some(json!({ "code": "guess" })),
            )
            .await;
        assert_eq!(status, 403, "{body}");
        let (status, joined) = app
            .club_post(
                &bob,
                "/api/clubs/family/join",
                Some(json!({ "code": code })),
            )
            .await;
        assert_eq!((status, &joined), (200, &json!({ "joined": "member" })));
        let (_, family) = app.get("/api/clubs/family", Some(&bob.cookie)).await;
        assert!(
            family.get("invite_url").is_none(),
            "members do not see the link"
        );
        let (_, mine) = app.get("/api/clubs/mine", Some(&bob.cookie)).await;
        let ids: Vec<&str> = mine["clubs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["chess-club-7b", "family"]);
    }
);

on_both_backends!(
    a_club_arena_is_for_its_members_and_lichess_sees_the_club_as_a_team,
    |app: TestApp| async move {
        let coach = app
            .api_player("Coach", &["tournament:write", "team:write"])
            .await;
        let pupil = app
            .api_player("Pupil", &["tournament:write", "team:write"])
            .await;
        let stranger = app.api_player("Stranger", &["tournament:write"]).await;
        let (status, _) = app
            .club_post(
                &coach.web,
                "/api/clubs",
                Some(json!({ "name": "School", "admission": "open" })),
            )
            .await;
        assert_eq!(status, 201);

        // Joining through lichess's team route.
        let (status, body) = app
            .api("POST", "/team/school/join", Some(&stranger.token), &[])
            .await;
        assert_eq!(status, 403, "team:write is needed: {body}");
        let (status, body) = app
            .api("POST", "/team/school/join", Some(&pupil.token), &[])
            .await;
        assert_eq!((status, &body), (200, &json!({ "ok": true })));
        let (status, body) = app
            .api("POST", "/team/nowhere/join", Some(&pupil.token), &[])
            .await;
        assert_eq!((status, error_text(&body)), (404, "No such team"));

        let (status, team) = app.api("GET", "/api/team/school", None, &[]).await;
        assert_eq!(status, 200, "{team}");
        assert_eq!(team["name"], "School");
        assert_eq!(team["open"], true);
        assert_eq!(team["nbMembers"], 2);
        assert_eq!(team["leader"]["id"], "coach");
        assert_eq!(team["leaders"], json!([{ "name": "Coach", "id": "coach" }]));
        let response = app
            .api_response("GET", "/api/team/school/users", None, &[])
            .await;
        assert_eq!(response.headers()["content-type"], "application/x-ndjson");
        let text = response.text().await.unwrap();
        let users: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let ids: Vec<&str> = users.iter().map(|u| u["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["coach", "pupil"]);

        // Only a leader creates the club's arena; only members join it.
        let form = [
            ("clockTime", "3"),
            ("clockIncrement", "2"),
            ("minutes", "30"),
            ("conditions.teamMember.teamId", "school"),
        ];
        let (status, body) = app
            .api("POST", "/api/tournament", Some(&pupil.token), &form)
            .await;
        assert_eq!(status, 403, "a member is not a leader: {body}");
        let (status, arena) = app
            .api("POST", "/api/tournament", Some(&coach.token), &form)
            .await;
        assert_eq!(status, 200, "{arena}");
        assert_eq!(arena["teamMember"], "school");
        let id = arena["id"].as_str().unwrap().to_owned();
        let join = format!("/api/tournament/{id}/join");
        let (status, body) = app.api("POST", &join, Some(&stranger.token), &[]).await;
        assert_eq!(status, 400, "not a member: {body}");
        assert!(error_text(&body).contains("members"), "{body}");
        let (status, _) = app.api("POST", &join, Some(&pupil.token), &[]).await;
        assert_eq!(status, 200);

        let (_, club) = app.get("/api/clubs/school", Some(&pupil.web.cookie)).await;
        assert_eq!(club["arenas"]["upcoming"][0]["id"], id.as_str(), "{club}");
        assert_eq!(club["arenas"]["upcoming"][0]["players"], 1);
        let response = app
            .api_response("GET", "/api/team/school/arena", None, &[])
            .await;
        let text = response.text().await.unwrap();
        let listed: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["id"], id.as_str());
        assert_eq!(listed[0]["nbPlayers"], 1);
    }
);
