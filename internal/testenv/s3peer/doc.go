// Package s3peer is a real S3-compatible server for tests: gofakes3
// (the library rclone's own serve s3 is built on) over an in-memory
// store, on 127.0.0.1 at a free port, taking only requests signed
// (AWS Signature Version 4) with its one test key pair. A test reads the
// store directly ([Peer.Objects]) to see what a client really put there.
//
// Test-only: nothing but _test.go files imports it (internal/repotest's
// allow-lists keep it out of every binary).
package s3peer
