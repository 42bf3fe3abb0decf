// Package webhook is an agent's webhooks: their record in the agent's
// settings (~/.lnk/agents/<agent id>/webhooks.json: the listener's port,
// each webhook's name, id and the expiry of a rolled secret), their
// secrets kept with the owner's (~/.lnk/secrets.toml, granted to no
// agent), and the listener that takes their posts on 127.0.0.1.
//
// # Security
//
// A webhook's secret is 32 random bytes, shown once by Add or Roll as
// whsec_<base64> and never logged; only the listener reads it (the file
// opened at each post, parsed again when it changed) and hands it, with
// each post, to that webhook's own lnk-webhook on its stdin (checker.go):
// one confined process per webhook, started at its first post and kept.
// Ids are 128 random bits. Every file is opened through
// internal/ownerfile (never through a link, 600, written whole), but for
// hooks-seen.log, the ids taken since hooks-seen.json was last written
// whole, appended by group commit: a post is answered 202 only once the
// append holding its id is durable, and refused 503 when the record is
// at its limit (seen.go, seenlog.go). A listener holds hooks-seen.lock
// (flock) for its whole life, from before it reads the record: a
// second listener of the agent is refused at its start (ErrListening),
// before it reads or writes either file (seenlock.go). At a start the
// record is read as the listener writes it, anything else by
// encoding/json, the two proved alike by a differential fuzz target
// (seenload.go). An error on a security path
// refuses the post. The listener binds 127.0.0.1 alone; a public
// address is a tunnel's, which the owner opens (lnk tunnel open --public
// is out of Link's scope). Each taken post goes to the agent through its
// way in (services/wayin, deliver.go), never to the harness directly,
// and a refused one is told its status's fixed text alone. A post whose
// conversation is in a turn is taken at once: the harness keeps it in
// that conversation's inbox on the disk and runs it after
// (services/harness/store's inbox), so its 202 never waits for a turn.
package webhook
