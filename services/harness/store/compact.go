package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// compactAt is the log's length past which Close compacts a compact
// chat: big enough that most turns append only, small enough that the
// log a reader parses line by line stays short.
const compactAt = 1 << 20

// frameTarget is the most lines a new frame takes, decompressed (a line
// longer than that is a frame alone): well under MaxFrame, so a reader
// never holds much of a frame at once.
const frameTarget = 8 << 20

// openFrames opens events.zst as every file of the conversation is
// opened, or returns nil when there is none.
func (v *Conversation) openFrames() (*os.File, int64, error) {
	f, err := ownerfile.OpenFile(v.dirFd(), framesName, ownerfile.Rule{Type: unix.S_IFREG, Forbid: 0o077, OneLink: true})
	if errors.Is(err, unix.ENOENT) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// readFrames reads every event of events.zst after the number after
// and returns the last number.
func (v *Conversation) readFrames(after int64, add func(Event)) (int64, error) {
	f, size, err := v.openFrames()
	if f == nil || err != nil {
		return after, err
	}
	defer f.Close()
	last := after
	err = eachFrame(f, size, func(_ int64, lines []byte) error {
		var err error
		last, err = frameEvents(lines, last, add)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", framesName, err)
	}
	return last, nil
}

// frameEvents reads one frame's lines, every one whole.
func frameEvents(lines []byte, after int64, add func(Event)) (int64, error) {
	last, torn, err := parseLog(bytes.NewReader(lines), after, add)
	if err == nil && len(torn) > 0 {
		err = fmt.Errorf("%w: a frame ends in part of a line", ErrFrame)
	}
	return last, err
}

// readFramesTail learns the last number events.zst holds from its last
// frame, and finishes a compaction cut short after its rename: a log
// whose last line a frame already holds is emptied.
func (v *Conversation) readFramesTail() error {
	f, size, err := v.openFrames()
	if f == nil || err != nil {
		return err
	}
	defer f.Close()
	var lastOff int64 = -1
	for off := int64(0); off < size; {
		end, err := frameEnd(f, off)
		if err != nil {
			return fmt.Errorf("%s: %w", framesName, err)
		}
		lastOff, off = off, end
	}
	if lastOff < 0 {
		return nil
	}
	err = eachFrame(io.NewSectionReader(f, lastOff, size-lastOff), size-lastOff, func(_ int64, lines []byte) error {
		var err error
		v.framed, err = frameEvents(lines, 0, func(Event) {})
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", framesName, err)
	}
	if v.size > 0 && v.last <= v.framed {
		v.logf("%s holds only lines already in %s (a compaction cut short): emptied", logName, framesName)
		if err := v.emptyLog(); err != nil {
			return err
		}
	}
	v.last = max(v.last, v.framed)
	return nil
}

// Compact moves the log's lines into a new frame of events.zst (see the
// package doc), whatever the conversation's options.
func (v *Conversation) Compact() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	return v.compactLocked()
}

func (v *Conversation) compactLocked() error {
	if v.size == 0 {
		return nil
	}
	var chunks [][]byte
	var cur []byte
	last := v.framed
	_, err := readLines(io.NewSectionReader(v.log, 0, v.size), MaxLine, func(line []byte) error {
		e, err := decodeEvent(line)
		if err != nil {
			return err
		}
		if e.Seq <= v.framed {
			return nil
		}
		if e.Seq <= last {
			return fmt.Errorf("number %d after %d", e.Seq, last)
		}
		last = e.Seq
		if len(cur) > 0 && len(cur)+len(line)+1 > frameTarget {
			chunks, cur = append(chunks, cur), nil
		}
		cur = append(append(cur, line...), '\n')
		return nil
	})
	if err != nil {
		return fmt.Errorf("compacting %s: %w", logName, err)
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	if len(chunks) > 0 {
		if err := v.writeFrames(chunks); err != nil {
			return fmt.Errorf("compacting %s: %w", logName, err)
		}
		v.framed = last
	}
	return v.emptyLog()
}

// writeFrames writes events.zst anew beside itself, its frames then
// chunks' frames, and renames it over the old one.
func (v *Conversation) writeFrames(chunks [][]byte) (err error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + framesName + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := ownerfile.Open(v.dirFd(), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(fd), tmp)
	defer func() {
		if out != nil {
			out.Close()
		}
		if err != nil {
			unix.Unlinkat(v.dirFd(), tmp, 0)
		}
	}()
	old, size, err := v.openFrames()
	if err != nil {
		return err
	}
	if old != nil {
		_, err = io.Copy(out, io.NewSectionReader(old, 0, size))
		old.Close()
		if err != nil {
			return err
		}
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	defer enc.Close()
	for _, c := range chunks {
		if _, err := out.Write(enc.EncodeAll(c, nil)); err != nil {
			return err
		}
	}
	if err := out.Sync(); err != nil {
		return err
	}
	err = out.Close()
	out = nil
	if err != nil {
		return err
	}
	if err := ownerfile.Rename(v.dirFd(), tmp, v.dirFd(), framesName, 0); err != nil {
		return err
	}
	return ownerfile.SyncDir(v.dirFd())
}

// emptyLog cuts the log to nothing through its handle.
func (v *Conversation) emptyLog() error {
	if err := unix.Ftruncate(int(v.log.Fd()), 0); err != nil {
		return fmt.Errorf("emptying %s: %w", logName, err)
	}
	v.size = 0
	return v.log.Sync()
}
