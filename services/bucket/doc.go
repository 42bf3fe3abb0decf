// Package bucket is an agent's buckets: S3-compatible stores its files
// folder, and the backups in it (.lnk-backup), are pushed to and pulled
// from through rclone (security.txt, "Backups and restores": "It then
// lnk bucket pushes it and the folder to your clouds, encrypted if the
// agent's buckets are").
//
// An agent's buckets live in one file, its rclone.conf (600) in its
// Config folder (~/Link/Agents/<agent>/Config), which none of its
// sandboxes reaches: for each bucket NAME a section NAME_s3 (the S3
// endpoint, region and access key pair) and a section NAME, either an
// alias of NAME_s3:<bucket>/<agent id> or, with encryption, rclone's
// crypt over it with a password of 32 random bytes, kept obscured as
// rclone keeps it (which is not encryption: anyone who reads the file
// can reverse it). conf.go writes and reads that file, in the one form
// Link writes, and nothing else.
// carry.go gives a move the file: ReadConf on the leaving side, CheckConf
// and PutConf (with its undo) where it arrives, DeleteConf as it leaves.
//
// Push mirrors the files folder into NAME:files (rclone sync, with what
// it replaces or deletes kept under NAME:replaced/<time>); PullBackup
// copies .lnk-backup/<harness>.tar and Agent.tar from it into a fresh
// 700 folder Link made, and returns the archives opened.
//
// # Security
//
// Holds: an agent's bucket keys and encryption password, only while a
// call runs. May: run the rclone program (rclone.go) as a child, which
// reaches the bucket's endpoint and reads the files folder. Trusts: the
// rclone program found on PATH (as the owner installed it), the owner's
// Config folder.
//
// No secret is ever on rclone's command line or in its environment: the
// config file is opened here (internal/ownerfile: never through a link,
// the owner's, 600) and handed to the child as an inherited descriptor
// (--config /dev/fd/3). The child's environment is built from nothing
// (PATH, HOME the private ~/.lnk/agents/<agent id>/rclone, LANG): no proxy variable but Link's own, no cloud credential,
// no RCLONE_* setting of the owner's reaches it. Its stderr is read,
// capped and given back in the error with every secret of the call
// replaced by [secret]. The endpoint is https://, or http:// only to a
// loopback address (internal/netclass, the one classifier): anything
// else is refused before a file is written.
//
// Where the endpoint leads is judged again at every push and pull
// (route.go): its host resolved once, every answer judged by
// internal/netclass with this machine's own addresses known; one that
// is not public, or no answer, refuses the call before rclone starts.
// rclone then reaches the endpoint only through a helpers/netbroker
// proxy served on 127.0.0.1 for that child alone (HTTPS_PROXY,
// HTTP_PROXY), granted the endpoint's exact host:port and answering its
// name with the addresses checked (no second lookup); landlock lets the
// child connect to that port alone. An endpoint at a loopback address
// (only ever the owner's) is reached directly, on its port. A bucket
// the owner added --private-host (private.go: a mark of its name and
// endpoint in ~/.lnk/agents/<agent id>/bucket-private-hosts, Link's
// own setting, never in rclone.conf and never carried; a received conf
// clears the marks) may also resolve to the owner's network (private,
// CGNAT, link-local), its proxy granted that host:port alone as a LAN
// endpoint; loopback, this machine's own and metadata stay refused.
// Push never follows a link
// (rclone without --links or --copy-links, and -x: no other file
// system): each link in the files folder is left out and named. What
// rclone pulls lands in a folder made new (700) for each pull,
// ~/.lnk/agents/<agent id>/rclone/pull-<random>, out of every agent's
// reach, and is returned as regular files opened without following a
// link; a pull that fails (a wrong key or password, a missing archive)
// removes that folder and leaves nothing.
package bucket
