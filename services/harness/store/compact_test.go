package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"lnk.dev/lnk/internal/testenv"
)

// TestACompactChatIsZstdFramesAndTheLinesSince: Compact moves the log's
// lines into events.zst (0600), which the zstd tool itself decompresses
// to exactly those lines, and empties the log; lines since go in the
// log; every event reads back in order, and a reopened chat goes on from
// the last number a frame holds.
func TestACompactChatIsZstdFramesAndTheLinesSince(t *testing.T) {
	v, dir := conv(t, "t", Options{Compact: true})
	th := filepath.Join(dir, "chats", "t")
	for i := 1; i <= 5; i++ {
		says(t, v, fmt.Sprint("m", i))
	}
	logged := read(t, filepath.Join(th, "events.jsonl"))
	if err := v.Compact(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(th, "events.zst")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("events.zst: %v %v", fi, err)
	}
	if got := read(t, filepath.Join(th, "events.jsonl")); got != "" {
		t.Errorf("the log after compacting: %q", got)
	}
	zstdTool, err := exec.LookPath("zstd")
	testenv.Require(t, err == nil, "the zstd tool")
	out, err := exec.Command(zstdTool, "-dc", filepath.Join(th, "events.zst")).Output()
	if err != nil || string(out) != logged {
		t.Errorf("zstd -dc: %v\n%q\nwant %q", err, out, logged)
	}
	says(t, v, "m6")
	if err := v.Compact(); err != nil {
		t.Fatal(err)
	}
	says(t, v, "m7")
	if got := texts(t, v); strings.Join(got, ",") != "m1,m2,m3,m4,m5,m6,m7" {
		t.Errorf("events: %q", got)
	}
	v.Close()
	_, f := agentAt(t, dir)
	w, err := chats(t, f).Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if n := says(t, w, "m8"); n != 8 {
		t.Errorf("reopened, the next number is %d", n)
	}
	w.Compact()
	if w.Last() != 8 || len(texts(t, w)) != 8 {
		t.Errorf("last %d, %q", w.Last(), texts(t, w))
	}
	if _, err := w.Append(&Event{Seq: 3, Kind: KindMessage}); !errors.Is(err, ErrWritten) {
		t.Errorf("a number in a frame, again: %v", err)
	}
}

// TestCloseCompactsALongLog: a compact chat whose log has passed
// compactAt is compacted when it closes; one that is not compact, or
// whose log is short, is left as it is.
func TestCloseCompactsALongLog(t *testing.T) {
	for _, tc := range []struct {
		compact bool
		n       int
		moved   bool
	}{{true, 120, true}, {true, 2, false}, {false, 120, false}} {
		v, dir := conv(t, "t", Options{Compact: tc.compact})
		for i := 0; i < tc.n; i++ {
			says(t, v, strings.Repeat("x", 10<<10))
		}
		v.Close()
		logLen := len(read(t, filepath.Join(dir, "chats/t/events.jsonl")))
		if (logLen == 0) != tc.moved {
			t.Errorf("compact %v, %d events: the log holds %d bytes after Close", tc.compact, tc.n, logLen)
		}
	}
}

// TestACompactionCutShortAfterItsRenameReadsOnce: a crash after
// events.zst was renamed into place but before the log was emptied
// leaves lines in both: they are read once, and the next Open finishes
// the compaction, saying so.
func TestACompactionCutShortAfterItsRenameReadsOnce(t *testing.T) {
	var lines bytes.Buffer
	for i := int64(1); i <= 5; i++ {
		lines.WriteString(line(i, fmt.Sprint("m", i)))
	}
	c, th := prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, "events.jsonl"), lines.Bytes(), 0o600)
		os.WriteFile(filepath.Join(th, "events.zst"), frame(t, lines.Bytes()), 0o600)
	})
	var l logs
	v, err := c.Open("t", Options{Logf: l.f})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := texts(t, v); strings.Join(got, ",") != "m1,m2,m3,m4,m5" {
		t.Errorf("events: %q", got)
	}
	if !strings.Contains(l.String(), "compaction cut short") || read(t, filepath.Join(th, "events.jsonl")) != "" {
		t.Errorf("not finished: %q", l.String())
	}
	if n := says(t, v, "m6"); n != 6 {
		t.Errorf("next %d", n)
	}
}

func frame(t testing.TB, b []byte) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// TestAFramePast64MiBIsRefused: a frame whose header says it holds 64
// MiB and a byte is refused before anything is decoded; one that says
// nothing of its size and decompresses past 64 MiB is refused when it
// passes it; a frame of 64 MiB exactly is decoded (the positive control
// at the limit).
func TestAFramePast64MiBIsRefused(t *testing.T) {
	past := bytes.Repeat([]byte("a"), MaxFrame+1)
	said := frame(t, past)
	if _, err := frameEnd(bytes.NewReader(said), 0); !errors.Is(err, ErrFrame) || !strings.Contains(err.Error(), "past 64 MiB") {
		t.Errorf("a frame saying 64 MiB and a byte: %v", err)
	}
	var streamed bytes.Buffer
	enc, _ := zstd.NewWriter(&streamed)
	for i := 0; i < 65; i++ {
		enc.Write(past[:1<<20])
	}
	enc.Close()
	end, err := frameEnd(bytes.NewReader(streamed.Bytes()), 0)
	if err != nil {
		t.Fatalf("a frame that does not say its size: %v", err)
	}
	// Refused by the decoder as it passes the limit (its memory bounded),
	// not once the whole is made.
	if _, err := decodeFrame(streamed.Bytes()[:end]); !errors.Is(err, ErrFrame) || !errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		t.Errorf("a frame decompressing to 65 MiB: %v", err)
	}
	exact := frame(t, past[:MaxFrame])
	if out, err := decodeFrame(exact); err != nil || len(out) != MaxFrame {
		t.Errorf("a frame of 64 MiB exactly: %d %v", len(out), err)
	}
}

// TestAFrameIsReadOnlyWhole: events.zst cut short, with a byte after its
// last frame, with a skippable frame, or with a frame ending in part of
// a line fails the read; whole, it reads (the positive control).
func TestAFrameIsReadOnlyWhole(t *testing.T) {
	whole := frame(t, []byte(line(1, "one")+line(2, "two")))
	skippable := append([]byte{0x50, 0x2a, 0x4d, 0x18, 1, 0, 0, 0, 'x'}, whole...)
	for name, zst := range map[string][]byte{
		"cut short":    whole[:len(whole)-1],
		"a byte after": append(bytes.Clone(whole), 0),
		"skippable":    skippable,
		"part of line": append(bytes.Clone(whole), frame(t, []byte(`{"seq":3`))...),
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := prepared(t, func(th string) { os.WriteFile(filepath.Join(th, "events.zst"), zst, 0o600) })
			v, err := c.Open("t", Options{})
			if err == nil {
				_, err = v.Events()
				v.Close()
			}
			if err == nil {
				t.Fatal("read")
			}
			t.Log(err)
		})
	}
	c, _ := prepared(t, func(th string) { os.WriteFile(filepath.Join(th, "events.zst"), whole, 0o600) })
	v, err := c.Open("t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if got := texts(t, v); strings.Join(got, ",") != "one,two" {
		t.Errorf("the positive control: %q", got)
	}
}

// TestACrashLeavesTheOldChatOrTheNew: a writer appending and compacting
// in a loop is killed at moments spread over its work, again and again;
// after each, the chat opens and reads every number from 1 once, never
// fewer than before.
func TestACrashLeavesTheOldChatOrTheNew(t *testing.T) {
	if dir := os.Getenv("STORE_CRASH_DIR"); dir != "" {
		crashWriter(dir)
		return
	}
	dir, f := agent(t)
	c := chats(t, f)
	seen := 0
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestACrashLeavesTheOldChatOrTheNew$")
		cmd.Env = append(os.Environ(), "STORE_CRASH_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(40+round*25) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		v, err := c.Open("t", Options{})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		es, err := v.Events()
		v.Close()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i, e := range es {
			if e.Seq != int64(i+1) {
				t.Fatalf("round %d: event %d is number %d", round, i, e.Seq)
			}
		}
		if len(es) < seen {
			t.Fatalf("round %d: %d events, fewer than %d", round, len(es), seen)
		}
		seen = len(es)
	}
	t.Logf("%d events after the crashes", seen)
}

func crashWriter(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		os.Exit(2)
	}
	c, err := OpenChats(f)
	if err != nil {
		os.Exit(2)
	}
	v, err := c.Open("t", Options{Compact: true})
	if err != nil {
		os.Exit(2)
	}
	for {
		for i := 0; i < 20; i++ {
			v.Append(&Event{Kind: KindMessage, Text: strings.Repeat("y", 4096)})
		}
		v.Compact()
	}
}

// TestWhatACutShortWriterLeftIsSwept: a new events.zst or
// conversation.md a crash left before its rename is removed at the next
// Open, said; other files stay.
func TestWhatACutShortWriterLeftIsSwept(t *testing.T) {
	var l logs
	c, th := prepared(t, func(th string) {
		os.WriteFile(filepath.Join(th, ".events.zst.tmp-0123"), []byte("part"), 0o600)
		os.WriteFile(filepath.Join(th, ".conversation.md.tmp-4567"), []byte("part"), 0o600)
		os.WriteFile(filepath.Join(th, "kept.txt"), []byte("mine"), 0o600)
	})
	v, err := c.Open("t", Options{Logf: l.f})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ents, _ := os.ReadDir(th)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != "conversation.md,events.jsonl,kept.txt" || strings.Count(l.String(), "cut short") != 2 {
		t.Errorf("left %q; said %q", got, l.String())
	}
}
