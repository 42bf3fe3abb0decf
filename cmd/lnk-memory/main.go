// Command lnk-memory is Link Memory, one process for all of one owner's
// sandboxed agents, outside every sandbox:
//
//	lnk-memory serve --owner OWNER --agent ID=NAME [--agent ID=NAME …] [--idle 10s]
//	lnk-memory connect --agent NAME   (memory-<agent id>'s server: a session on the service)
//	lnk-memory keep --owner OWNER --agent ID=NAME …   (connect's start: the model and the service)
//	lnk-memory extract docx|pdf       (its own child: a document's text)
//
// It listens on ~/Link/Agents/.memory/OWNER/run/memory.sock, serves each
// agent named (its Home ~/Link/Agents/NAME/Home, its own folder
// ~/Link/Agents/NAME/Agent) to the sessions that name its ID
// (lnk.dev/lnk/services/memory/service), logs to memory.log beside run/,
// and ends --idle after its last session.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/embed"
	"lnk.dev/lnk/services/memory/extract"
	"lnk.dev/lnk/services/memory/filter"
	"lnk.dev/lnk/services/memory/service"
)

const usage = `usage:
  lnk-memory serve --owner OWNER --agent ID=NAME [--agent ID=NAME …] [--idle 10s]
  lnk-memory connect --agent NAME`

type agentFlags []string

func (a *agentFlags) String() string     { return strings.Join(*a, ",") }
func (a *agentFlags) Set(v string) error { *a = append(*a, v); return nil }

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "lnk-memory:", err)
	os.Exit(code)
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "extract" && os.Args[2] == "serve" {
		// The extractor: starts each document's child for the service.
		if err := extractor(); err != nil {
			fail(1, err)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "extract" {
		// The child: the document on stdin, its text on stdout.
		if err := extract.Child(os.Args[2], os.Stdin, os.Stdout); err != nil {
			fail(1, err)
		}
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "keep" {
		// connect's start: the model served and the service run beside it.
		if err := keep(os.Args[2:]); err != nil {
			fail(1, err)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "connect" && os.Args[2] == "--agent" {
		if err := connect(os.Args[3]); err != nil {
			fail(1, err)
		}
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fail(2, errors.New(usage))
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	owner := fs.String("owner", "", "the owner whose agents this serves")
	idle := fs.Duration("idle", 10*time.Second, "how long to go on after the last session")
	var agents agentFlags
	fs.Var(&agents, "agent", "ID=NAME of an agent to serve (repeated)")
	fs.Parse(os.Args[2:])
	if *owner == "" || len(agents) == 0 || fs.NArg() != 0 || *idle <= 0 {
		fail(2, errors.New(usage))
	}
	if err := serve(*owner, agents, *idle); err != nil {
		fail(1, err)
	}
}

func serve(owner string, agents []string, idle time.Duration) error {
	if err := service.CheckOwner(owner); err != nil {
		return fmt.Errorf("--owner: %w", err)
	}
	home := os.Getenv("HOME")
	if os.Getenv(landlock.BornConfined[:strings.IndexByte(landlock.BornConfined, '=')]) == "" {
		// Made (0700, the owner's) before confinement; inside the domain
		// (after landlock's re-exec) they are only opened again.
		d, err := ownerdir.Open(home, "Link", "Agents", ".memory", owner)
		if err != nil {
			return err
		}
		d.Close()
	}
	agentsDir, err := openPath(home+"/Link/Agents", ownerfile.PrivateDir)
	if err != nil {
		return err
	}
	defer agentsDir.Close()
	dir, err := openPath(home+"/Link/Agents/.memory/"+owner, ownerfile.PrivateDir)
	if err != nil {
		return err
	}
	defer dir.Close()
	logFD, err := ownerfile.Open(int(dir.Fd()), "memory.log", unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o600)
	if err != nil {
		return fmt.Errorf("memory.log: %w", err)
	}
	if err := ownerfile.Check(logFD, ownerfile.Private); err != nil {
		return fmt.Errorf("memory.log: %w", err)
	}
	logFile := os.NewFile(uintptr(logFD), "memory.log")
	var log io.Writer = logFile
	// run/ (its socket's folder), made before confinement: of its own
	// folder the service then writes only run/ and appends to its log.
	runFD, err := ownerfile.MakeDir(int(dir.Fd()), "run", unix.O_PATH, ownerfile.PrivateDir)
	if err != nil {
		return fmt.Errorf("the memory service's run folder: %w", err)
	}
	run := os.NewFile(uintptr(runFD), "run")
	defer run.Close()
	model, err := modelOf(os.Getenv(embed.Env), log)
	if err != nil {
		return err
	}
	s := &service.Service{Agents: map[string]*memory.Agent{}, Idle: idle, Log: log}
	var ext *extract.Extractor // started once confined, before the filter
	for _, spec := range agents {
		id, name, ok := strings.Cut(spec, "=")
		if !ok {
			return fmt.Errorf("--agent %q is not ID=NAME", spec)
		}
		a, err := openAgent(int(agentsDir.Fd()), id, name)
		if err != nil {
			return err
		}
		defer a.Close()
		a.Log = func(format string, args ...any) { memory.LogLine(log, format, args...) }
		a.Extract = func(kind string, doc []byte) (string, error) { return ext.Extract(kind, doc) }
		if model != nil {
			a.Embed = func(texts []string) ([][]float32, error) { return model.Embed(context.Background(), texts) }
			a.EmbedQuery = func(query string) ([]float32, error) { return model.EmbedQuery(context.Background(), query) }
		}
		s.Agents[id] = a
	}
	var port uint16
	if model != nil {
		port = model.Addr().Port()
	}
	if err := confine(s.Agents, own{dir: dir, run: run, log: logFile}, port); err != nil {
		return err
	}
	// The last process this one starts: it may not exec once filtered.
	if ext, err = extract.StartExtractor("/proc/self/exe"); err != nil {
		return err
	}
	defer ext.Close()
	load := filter.Service
	if model != nil {
		load = filter.ServiceModel
	}
	if err := load(); err != nil {
		return fmt.Errorf("confining the memory service: %w\nhint: Link Memory runs only filtered; a kernel without seccomp cannot run it", err)
	}
	l, err := service.Listen(dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if model != nil {
		// Searched by words until it answers (embed.Client).
		go model.Start(ctx, embed.StartWait)
	}
	return s.Serve(ctx, l)
}

// openAgent opens the agent's Home and own folder beneath ~/Link/Agents
// through no link, the own folder the owner's 0700 one.
func openAgent(agents int, id, name string) (*memory.Agent, error) {
	if err := service.CheckID(id); err != nil {
		return nil, err
	}
	if name == "" || name[0] == '.' || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("%q is not an agent's name", name)
	}
	homeFD, err := ownerfile.OpenDir(agents, name+"/Home", unix.O_PATH)
	if err != nil {
		return nil, fmt.Errorf("agent %s's Home: %w", name, err)
	}
	home := os.NewFile(uintptr(homeFD), name+"/Home")
	defer home.Close()
	if err := ownerfile.Check(homeFD, ownerfile.Rule{Type: unix.S_IFDIR, Forbid: 0o022}); err != nil {
		return nil, fmt.Errorf("agent %s's Home: %w", name, err)
	}
	ownFD, err := ownerfile.OpenDir(agents, name+"/Agent", unix.O_PATH)
	if err != nil {
		return nil, fmt.Errorf("agent %s's own folder: %w", name, err)
	}
	own := os.NewFile(uintptr(ownFD), name+"/Agent")
	defer own.Close()
	if err := ownerfile.Check(ownFD, ownerfile.PrivateDir); err != nil {
		return nil, fmt.Errorf("agent %s's own folder: %w", name, err)
	}
	return memory.OpenAgent(id, home, own)
}

// openPath opens the folder at path as O_PATH through no link, refused
// unless it passes r. landlock checks no O_PATH open, so the process
// re-executed inside its domain opens the same folders again.
func openPath(path string, r ownerfile.Rule) (*os.File, error) {
	fd, err := ownerfile.OpenPath(path, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	if err := ownerfile.Check(fd, r); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// own is the service's own folder (~/Link/Agents/.memory/<owner>), its
// run/ and its log, as confine grants them.
type own struct{ dir, run, log *os.File }

// confine puts the process in its landlock domain: each agent's Home,
// chats/ and skills/ read, its Agent/memory/ written, the service's own
// folder read, of it only run/ (its socket) written and its log
// appended to (so it can't change what Link reads there, nor put a link
// where its log is), its own program read and run (by
// the extractor it starts next); nothing else, and no TCP. Its seccomp
// filter (services/memory/filter) follows, once the extractor runs.
func confine(agents map[string]*memory.Agent, o own, modelPort uint16) error {
	rules := []landlock.Rule{
		landlock.Beneath(int(o.dir.Fd()), landlock.Read),
		landlock.Beneath(int(o.run.Fd()), landlock.Read|landlock.Write),
		landlock.Beneath(int(o.log.Fd()), landlock.Write),
	}
	if modelPort != 0 {
		// The model's one port (ABI 4; no TCP rule at all is no TCP).
		rules = append(rules, landlock.ConnectTCP(modelPort))
	}
	// Its own program, run again as the documents' extractor.
	exe, err := unix.Open("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	fds := []int{exe}
	rules = append(rules, landlock.Beneath(exe, landlock.Read|landlock.Exec))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, a := range agents {
		r, f, err := a.Rules()
		if err != nil {
			return err
		}
		rules = append(rules, r...)
		fds = append(fds, f...)
	}
	if _, err := landlock.Restrict(rules...); err != nil {
		return fmt.Errorf("confining the memory service: %w\nhint: Link Memory runs only confined; a kernel without landlock cannot run it", err)
	}
	return nil
}

// extractor is lnk-memory extract serve, the one process the service
// starts: confined to its own program (landlock: that file read and run,
// nothing else) and filtered (exec, no socket), it starts each
// document's child (extract.Serve).
func extractor() error {
	exe, err := unix.Open("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_, err = landlock.Restrict(landlock.Beneath(exe, landlock.Read|landlock.Exec))
	unix.Close(exe)
	if err != nil {
		return fmt.Errorf("confining the extractor: %w", err)
	}
	if err := filter.Extractor(); err != nil {
		return fmt.Errorf("confining the extractor: %w", err)
	}
	return extract.Serve(os.Stdin, os.Stdout, "/proc/self/exe")
}

// modelOf is the client of the model $LNK_MEMORY_MODEL names, nil where
// it names none; an address that is not loopback is refused and the
// service does not start.
func modelOf(addr string, log io.Writer) (*embed.Client, error) {
	if addr == "" {
		return nil, nil
	}
	ap, err := embed.ParseAddr(addr)
	if err != nil {
		return nil, fmt.Errorf("%w\nhint: lnk model builtin serves an embedding model on 127.0.0.1; set %s=127.0.0.1:PORT", err, embed.Env)
	}
	return embed.New(ap, embed.Retry, func(format string, args ...any) { fmt.Fprintf(log, "lnk-memory: "+format+"\n", args...) })
}
