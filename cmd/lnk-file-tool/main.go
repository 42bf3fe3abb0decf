// Command lnk-file-tool is Link File, the agent's files over MCP:
//
//	lnk-file-tool serve [--no-find] [--no-diffs] -- COMMAND...
//	lnk-file-tool serve [--no-find] [--no-diffs] --agent NAME
//	lnk-file-tool apply --files FOLDER [--agent-folder FOLDER] [--write NAME]...
//
// serve is the MCP server on stdio (lnk.dev/lnk/services/filetool); it
// runs every call in COMMAND, which Link makes `lnk sandbox run … --
// lnk-file-tool apply …`; with --agent NAME, COMMAND is `lnk sandbox file
// --agent NAME` (lnk beside this program), the agent's grants narrowed to
// the file tool (package lnk.dev/lnk/services/filetool/grants). apply is that sandboxed side (package
// lnk.dev/lnk/services/filetool/apply): calls as JSON lines on stdin,
// answers on stdout. Both are one binary so the sandbox needs exactly one
// program in [commands]; apply's package links no os/exec and no net (a
// test in services/filetool checks), though the binary does for serve.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"

	"lnk.dev/lnk/services/filetool"
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

func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	var o filetool.Offer
	fs.BoolVar(&o.NoFind, "no-find", false, "leave find out")
	fs.BoolVar(&o.NoDiffs, "no-diffs", false, "leave each write's diff out")
	agent := fs.String("agent", "", "run the calls in the agent's file sandbox (lnk sandbox file --agent NAME)")
	fs.Parse(args)
	argv := fs.Args()
	switch {
	case *agent != "" && len(argv) > 0:
		fail(2, errors.New("serve takes --agent or a command after --, not both"))
	case *agent != "":
		exe, err := os.Executable()
		if err != nil {
			fail(1, err)
		}
		argv = []string{filepath.Join(filepath.Dir(exe), "lnk"), "sandbox", "file", "--agent", *agent}
	case len(argv) == 0:
		fail(2, errors.New("serve needs --agent NAME or a command after --, which runs the calls"))
	}
	sb := &filetool.Sandboxed{Argv: argv, Log: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	runtime.GOMAXPROCS(1)   // one call at a time: see oneP
	debug.SetGCPercent(400) // its live heap is small: collect less often
	t := filetool.StdioTransport(filetool.StdPipe(os.Stdin), filetool.StdPipe(os.Stdout))
	if err := filetool.Serve(ctx, o, sb, t); err != nil && ctx.Err() == nil {
		fail(1, err)
	}
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
	if err := apply.Serve(filetool.StdPipe(os.Stdin), filetool.StdPipe(os.Stdout), s); err != nil {
		fail(1, err)
	}
}

// oneP: serve and apply each run on one P (GOMAXPROCS=1). Their calls
// come one at a time, and with a second P every goroutine made runnable
// wakes another thread: a context switch each, the dearest part of a
// call on a 2-core machine (12 a call in serve with two Ps, 6 with one).
// Measured again once apply's reads made no system call the scheduler
// sees (resolve.Root.ReadFileRaw), a 4 KiB read, A/B interleaved on 2
// cores at load 2.6-4.5: apply alone 120 µs of CPU a call with one P, 129
// with two; a whole session (serve, the sandbox, apply) 3.5-4.2 context
// switches a call with one P in serve, 6.1-6.9 with two, its CPU no lower.
