// Command lnk-file-tool is Link File, the agent's files over MCP:
//
//	lnk-file-tool serve [--no-find] [--no-diffs] -- COMMAND...
//	lnk-file-tool serve [--no-find] [--no-diffs] --agent NAME
//	lnk-file-tool apply --files FOLDER [--agent-folder FOLDER] [--write NAME]...
//
// serve is the MCP server on stdio: this program becomes lnk-file-serve,
// beside it (exec, same pid and stdio), which runs every call in
// COMMAND: Link makes it `lnk sandbox run … -- lnk-file-tool apply …`;
// with --agent NAME, COMMAND is `lnk sandbox file --agent NAME` (lnk
// beside this program), the agent's grants narrowed to the file tool
// (package lnk.dev/lnk/services/filetool/grants). apply is that
// sandboxed side (package lnk.dev/lnk/services/filetool/apply): calls as
// JSON lines on stdin, answers on stdout.
//
// This program is what the sandbox runs, so it links apply and no more:
// no MCP server, no HTTP, no os/exec, no net (internal/repotest's budget
// and a test in services/filetool check). It starts at every session's
// first call, in the sandbox's start; serve's MCP machinery, linked into
// it, cost each start package initialisation and page faults, and put
// code the sandbox never needs inside it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"

	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/internal/stdpipe"
	"lnk.dev/lnk/services/filetool/apply"
)

const usage = `usage:
  lnk-file-tool serve [--no-find] [--no-diffs] -- COMMAND...
  lnk-file-tool serve [--no-find] [--no-diffs] --agent NAME
  lnk-file-tool apply --files FOLDER [--agent-folder FOLDER] [--write NAME]...`

func main() {
	if len(os.Args) < 2 {
		fail(2, errors.New(usage))
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2:])
	case "apply":
		applyMain(os.Args[2:])
	case "-h", "--help", "help":
		fmt.Println(usage)
	default:
		fail(2, fmt.Errorf("no command %q\n%s", os.Args[1], usage))
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "lnk-file-tool:", err)
	os.Exit(code)
}

// serve becomes lnk-file-serve, beside this program, with args.
func serve(args []string) {
	server, err := beside.Program("lnk-file-serve")
	if err != nil {
		fail(1, err)
	}
	err = syscall.Exec(server, append([]string{server}, args...), os.Environ())
	fail(1, fmt.Errorf("serve: run %s: %w", server, err))
}

type list []string

func (l *list) String() string     { return fmt.Sprint(*l) }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func applyMain(args []string) {
	fs := flag.NewFlagSet("apply", flag.ExitOnError)
	files := fs.String("files", "", "the files folder (absolute)")
	agent := fs.String("agent-folder", "", "the agent's own folder (absolute)")
	var write list
	fs.Var(&write, "write", "a folder of the files folder the calls may write (relative; . for all); repeated")
	fs.Parse(args)
	if *files == "" || fs.NArg() != 0 {
		fail(2, errors.New(usage))
	}
	d, err := apply.OpenDisk(*files, *agent, write)
	if err != nil {
		fail(2, err)
	}
	s, err := apply.NewSession(d, write)
	if err != nil {
		fail(2, err)
	}
	s.Refused = func(op string, err error) {
		fmt.Fprintf(os.Stderr, "lnk-file-tool: refused %s: %s\n", op, apply.Reason(err))
	}
	runtime.GOMAXPROCS(1)   // one call at a time: see oneP
	debug.SetGCPercent(200) // a 4 MiB page kept, the rest per call
	if err := apply.Serve(stdpipe.Std(os.Stdin), stdpipe.Std(os.Stdout), s); err != nil {
		fail(1, err)
	}
}

// oneP: serve and apply each run on one P (GOMAXPROCS=1). Their calls
// come one at a time, and with a second P every goroutine made runnable
// wakes another thread: a context switch each, the dearest part of a
// call on a 2-core machine (BenchmarkRead4KiB counts about half the
// switches a call with one P, and no more CPU).
