// Command lnk-fsbroker serves an agent's folders to Link's kernel: the
// kernel starts it (internal/brokerproc), hands it root folder fds in a
// hello, and it confines itself to exactly those folders before it
// serves anything. See package helpers/fsbroker.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/fsbroker"
	"lnk.dev/lnk/helpers/fsbroker/confine"
	"lnk.dev/lnk/internal/brokerproc/child"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/wire"
)

func main() { os.Exit(run()) }

func run() int {
	logger := log.New(os.Stderr, "lnk-fsbroker: ", 0)
	// Out of reach of the owner's other processes (ptrace,
	// /proc/PID/mem and environ), as every broker is: it holds the
	// start's folders. First, so a landlock re-exec sets it again.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		logger.Printf("refusing to start: prctl(PR_SET_DUMPABLE): %v", err)
		return 2
	}
	ch, st, err := hello()
	if err != nil {
		logger.Printf("refusing to start: %v", err)
		return 2
	}
	// Landlock may re-execute this program (kernels without TSYNC): the
	// new process finds the hello in the environment and comes back here.
	folders := make([]confine.Folder, len(st.FDs))
	for i, fd := range st.FDs {
		folders[i] = confine.Folder{FD: fd, Write: st.Roots[i].Write}
	}
	degraded := len(os.Args) == 2 && os.Args[1] == "--degraded"
	if len(os.Args) > 1 && !degraded {
		refuse(st.ID, "invalid", "usage: lnk-fsbroker [--degraded]")
		logger.Printf("usage: lnk-fsbroker [--degraded] (started by Link's kernel)")
		return 2
	}
	abi, err := confine.Landlock(folders)
	if err != nil && degraded && errors.Is(err, landlock.ErrUnsupported) {
		logger.Printf("DEGRADED: this kernel has no landlock; serving confined by seccomp alone, as the owner asked (--degraded)")
		err = nil
	}
	if err == nil {
		err = confine.Seccomp()
	}
	if err != nil {
		refuse(st.ID, "unconfined", fmt.Sprintf("lnk-fsbroker cannot confine itself: %v", err))
		logger.Printf("refusing to serve: cannot confine itself: %v", err)
		return 2
	}
	os.Unsetenv(fsbroker.EnvHello)
	if err := child.CloseOnExec(child.ChannelFD, child.ChannelFD); err != nil {
		logger.Print(err)
		return 2
	}
	roots, err := st.Open()
	if err != nil {
		refuse(st.ID, "invalid", err.Error())
		logger.Print(err)
		return 2
	}
	body, _ := wire.Marshal(&fsbroker.HelloReply{LandlockABI: abi, Seccomp: true})
	if err := wire.WriteRecord(child.ChannelFD, wire.Record{Kind: wire.KindReply, Type: fsbroker.SpecHello.Type, ID: st.ID, Body: body}, nil); err != nil {
		logger.Printf("answering the hello: %v", err)
		return 1
	}
	srv, err := wire.NewServer(ch, fsbroker.Table(roots), logger.Printf)
	if err != nil {
		logger.Print(err)
		return 2
	}
	srv.SetState(fsbroker.StateReady)
	err = srv.Serve(context.Background())
	if errors.Is(err, wire.ErrProtocol) {
		return 1 // Serve logged why
	}
	return 0
}

// hello reads the first request from the channel, or on the second run
// after a re-exec, the state the first run left in the environment. It
// returns the channel's file, which must stay referenced (its finalizer
// would close fd 3).
func hello() (*os.File, fsbroker.HelloState, error) {
	if s, ok := os.LookupEnv(fsbroker.EnvHello); ok {
		st, err := fsbroker.HelloFromEnv(s)
		return os.NewFile(child.ChannelFD, "channel"), st, err
	}
	ch, extra, err := child.Channel(false)
	if err != nil {
		return nil, fsbroker.HelloState{}, err
	}
	if len(extra) != 0 {
		return ch, fsbroker.HelloState{}, fmt.Errorf("handed %d extra fds; roots come in the hello", len(extra))
	}
	rec, files, err := wire.ReadRecord(child.ChannelFD)
	if err != nil {
		return ch, fsbroker.HelloState{}, err
	}
	st, err := fsbroker.ParseHello(rec, files)
	if err != nil {
		refuse(rec.ID, "invalid", err.Error())
		return ch, st, err
	}
	return ch, st, st.Inheritable()
}

// refuse answers the hello with an error before exiting.
func refuse(id uint64, code, msg string) {
	body, _ := wire.Marshal(&wire.Error{Code: code, Message: msg})
	wire.WriteRecord(child.ChannelFD, wire.Record{Kind: wire.KindError, Type: fsbroker.SpecHello.Type, ID: id, Body: body}, nil)
}
