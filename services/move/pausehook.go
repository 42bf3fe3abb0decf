package move

import (
	"strconv"
	"strings"
	"time"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// The placing's test hook: a test that must kill a real lnk agent receive
// or restore at a given step of its placing (SIGKILL, as a crash would)
// writes that step's number to ~/.lnk/moving/placing-pause in the HOME it
// made; the placing then writes ~/.lnk/moving/placing-paused (the step's
// number) once that step is journaled and before it is taken, and waits
// there to be killed. Number len(steps) is the end: every step taken,
// the journal not yet removed. "head" is the journal's head written, no
// step yet: for a receive of an agent new here, before it is made.
// "checked" is a receive's name checked free, under the name's lock,
// before anything is unpacked (pauseChecked).
//
// It is compiled in but inert: with no such file (the one open per
// placing finds none) nothing changes. It cannot widen anything: it lives
// in ~/.lnk, the owner's own (700), which no sandbox is given, so only
// the owner can write it; it is read only as the owner's own file, 600,
// through no link; and all it can do is hold a placing still, which the
// owner could as well do with kill -STOP. What a kill then leaves is what
// the journal exists to undo.
const (
	pauseName  = "placing-pause"
	pausedName = "placing-paused"
	pauseHead  = -2 // the hook's "head"
	pauseCheck = -3 // the hook's "checked"
)

// pauseStep reads the hook's step from ~/.lnk/moving (dir); -1: none.
func pauseStep(dir int) int {
	b, err := ownerfile.ReadFile(dir, pauseName, ownerfile.Private, 32)
	if err != nil { // none (or not the owner's own: not the hook)
		return -1
	}
	switch strings.TrimSpace(string(b)) {
	case "head":
		return pauseHead
	case "checked":
		return pauseCheck
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// pauseAt waits to be killed at step n when the hook names it.
func (p *placing) pauseAt(n int) {
	if p.pause == -1 || n != p.pause {
		return
	}
	mark := strconv.Itoa(n)
	if n == pauseHead {
		mark = "head"
	}
	if err := ownerfile.WriteAtomic(p.j.dir, pausedName, []byte(mark), ownerfile.Write{}); err != nil {
		return
	}
	for {
		time.Sleep(time.Hour)
	}
}

// pauseChecked waits to be killed when the hook names "checked": a
// receive's name checked free and its lock held, nothing unpacked yet.
func pauseChecked(home string) {
	d, err := ownerdir.Open(home, ".lnk", "moving")
	if err != nil {
		return
	}
	defer d.Close()
	if pauseStep(int(d.Fd())) != pauseCheck {
		return
	}
	if err := ownerfile.WriteAtomic(int(d.Fd()), pausedName, []byte("checked"), ownerfile.Write{}); err != nil {
		return
	}
	for {
		time.Sleep(time.Hour)
	}
}
