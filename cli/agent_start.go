package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/cloexec"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/move"
)

// lnk agent start|restart NAME, and the hidden lnk agent supervise NAME
// that runs an agent's harness (services/agentlife): in the terminal
// with --foreground, else as the systemd user unit
// lnk-agent-<agent id>.service where a user manager runs, else in the
// background, a supervisor of its own session.

// startWait bounds how long start waits for the background supervisor to
// say its harness started.
const startWait = 30 * time.Second

func init() {
	register("agent", newAgentStart)
	register("agent", newAgentRestart)
	register("agent", newAgentSupervise)
}

type startFlags struct {
	foreground, noSandbox, sandbox, asJSON bool
	// yes answers yes to what start asks of a harness's needs (spec
	// "Asked, not assumed"); start asks none yet, so it answers nothing.
	// It never touches the sandbox setting: --no-sandbox is the only way.
	yes      bool
	model    string // --model: Link Harness's (agent_start_model.go)
	fallback string // --fallback: its fallback (agent_start_model.go)
	// answering: started by the receive placing it (receive --start's
	// answer), whose placing journal is its own, under way.
	answering bool
}

func newAgentStart() *cobra.Command {
	var f startFlags
	c := &cobra.Command{
		Use:   "start NAME [-- PROGRAM ARGS...]",
		Short: "Start the agent's harness, in its sandbox, restarted when it fails",
		Long: `Starts the agent's harness in its sandbox, through lnk sandbox run
--agent NAME, under a supervisor that appends its output to
~/.lnk/agents/NAME/logs/harness.log and starts it again when it fails.
The harness is Link Harness (lnk-harness) unless agent.toml's [start]
command names another program. Link Harness's model is agent.toml's
[model] (--model builtin or FORMAT:URL:MODEL sets it), else Link's
built-in model, which start makes sure runs (lnk model builtin); talk
to it with lnk agent send or lnk agent chat. --fallback FORMAT:URL:MODEL
(none removes it) sets [model.fallback]: the model a turn goes to when
Link Harness's model is off, silent for 60 s or can't hold the prompt,
and every turn for the 3 minutes after.
Where a systemd user manager runs, the supervisor is the user unit
lnk-agent-<agent id>.service; else it runs in the background; with
--foreground, in this terminal until Ctrl-C.

  lnk agent start NAME -- PROGRAM ARGS...   records PROGRAM as [start] command, then starts it

Each agent but main has a block of ports (LNK_PORT, the first; [start]
ports = N takes N and one more, 200 when unsaid), and does not start
while another program listens on one of them on this machine's loopback.

--no-sandbox turns the agent's sandbox off, until --sandbox turns it back
on: one setting, kept, warned at every start and shown in status. --yes
(yes to what start asks of a harness's needs) never implies it;
~/.lnk/machine.toml's unsandboxed = false refuses it.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeAgents,
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if len(args) > 1 && c.ArgsLenAtDash() != 1 {
				return Usage("lnk agent start takes one agent; a program comes after --", "lnk agent start "+name+" -- PROGRAM ARGS...")
			}
			return startAgent(c, name, args[1:], f)
		},
	}
	c.Flags().BoolVar(&f.foreground, "foreground", false, "supervise the harness in this terminal until Ctrl-C")
	c.Flags().BoolVar(&f.noSandbox, "no-sandbox", false, "turn the agent's sandbox OFF, kept until --sandbox (warned at every start)")
	c.Flags().BoolVar(&f.sandbox, "sandbox", false, "turn the agent's sandbox back on")
	c.Flags().BoolVar(&f.asJSON, "json", false, "print the agent's status as JSON once started")
	c.Flags().BoolVar(&f.yes, "yes", false, "answer yes to what start asks of a harness's needs; never turns the sandbox off (only --no-sandbox does)")
	c.Flags().StringVar(&f.model, "model", "", "Link Harness's model, kept in agent.toml: builtin, or FORMAT:URL:MODEL (openai:http://127.0.0.1:11434/v1:llama3.2)")
	c.Flags().StringVar(&f.fallback, "fallback", "", "Link Harness's fallback, kept in agent.toml's [model.fallback]: FORMAT:URL:MODEL of a provider, taken when the model is off, silent 60 s or can't hold the prompt, then for 3 minutes; none removes it")
	return c
}

func newAgentRestart() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:               "restart NAME",
		Short:             "Stop the agent, everything its harness started with it, and start it again",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAgents,
		RunE: func(c *cobra.Command, args []string) error {
			home, a, err := loadAgent(args[0])
			if err != nil {
				return err
			}
			if _, err := stopAgent(home, a); err != nil {
				return err
			}
			return startAgent(c, args[0], nil, startFlags{asJSON: asJSON})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the agent's status as JSON once started")
	return c
}

// startAgent is lnk agent start's work, restart's second half.
func startAgent(c *cobra.Command, name string, program []string, f startFlags) error {
	home := os.Getenv("HOME")
	if f.noSandbox && f.sandbox {
		return Usage("--no-sandbox and --sandbox contradict each other", "lnk agent start "+name+" --sandbox turns the sandbox back on")
	}
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return agentErr(err, name)
	}
	// A receive or restore of it that a kill cut short while it put
	// things in place is undone first (services/move's journal); one
	// under way (its lock held: a receive --start asking it to answer) is
	// its own.
	rec, err := move.Recover(home, a.ID, func(n string) error { return stoppedForUndo(home, n) })
	if errors.Is(err, move.ErrBusy) && !f.answering {
		// A move, backup or restore of it runs: one placing it now (its
		// journal there) is not started half placed.
		if left, lerr := move.PlacingLeft(home, a.ID); lerr != nil || left {
			err = errors.Join(err, lerr)
		} else {
			err = nil
		}
	} else if errors.Is(err, move.ErrBusy) {
		err = nil
	}
	if err != nil {
		if perr := placingErr(err, name); perr != nil {
			err = perr
		} else if errors.Is(err, move.ErrBusy) {
			err = Refused(fmt.Errorf("agent %s is being put in place by a receive or restore under way", name), "wait for it to end; lnk agent status "+name+" shows it")
		}
		return auditRefusal("agent start", name, agentErr(err, name))
	} else if rec != nil {
		fmt.Fprintln(c.ErrOrStderr(), "lnk: "+textsafe.Line(rec.String()))
		if a, err = caps.LoadAgent(home, name); err != nil {
			return agentErr(err, name)
		}
	}
	// One place at a time: an agent that moved away runs where it went.
	if err := caps.CheckNotMoved(home, a); err != nil {
		return auditRefusal("agent start", name, agentErr(err, name))
	}
	// What a restore cut short left a week ago goes (services/move).
	if err := move.SweepRestoring(home); err != nil {
		fmt.Fprintln(c.ErrOrStderr(), "lnk: removing what a restore cut short left in ~/Link/Agents: "+err.Error())
	}
	// Running, nothing is changed: a setting written now would apply at
	// the harness's next restart, unannounced.
	if st, err := agentlife.ReadStatus(home, a); err != nil {
		return err
	} else if st.Running {
		return Fail(ExitFailure, fmt.Errorf("agent %s is already running", name), "lnk agent stop "+name+" first to change how it starts; lnk agent restart "+name+" starts it again", "lnk agent status "+name+" shows it")
	}
	// What a conversation's delete cut short left aside (chats/
	// .~deleting~T) goes, never followed: no backup or move carries it,
	// and here it is removed for good.
	sweepDeleting(c, a)
	if f.noSandbox { // refused before it is written
		if err := caps.CheckNoSandbox(home); err != nil {
			return noSandboxRefused(name, err, "lnk agent start "+name+" runs it in its sandbox")
		}
	}
	if f.noSandbox || f.sandbox || len(program) > 0 {
		a, err = caps.UpdateAgent(home, name, func(a *caps.Agent) error {
			if f.noSandbox || f.sandbox {
				a.NoSandbox = f.noSandbox
			}
			if len(program) > 0 {
				if a.Start == nil {
					a.Start = &caps.AgentStart{}
				}
				a.Start.Command = program
			}
			return a.CheckStart()
		})
		if err != nil {
			return Refused(err, "lnk agent start "+name+" -- PROGRAM ARGS... names the program it starts")
		}
	}
	if f.model != "" || f.fallback != "" {
		if a, err = setModel(home, name, f.model, f.fallback); err != nil {
			return err
		}
	}
	if err := a.CheckStart(); err != nil {
		return Refused(err, "lnk agent start "+name+" -- PROGRAM ARGS... names the program it starts")
	}
	off, err := a.SandboxOff(home)
	if err != nil {
		return noSandboxRefused(name, err, "lnk agent start --sandbox "+name+" turns its sandbox back on")
	}
	// What would stop the supervisor's first start is said here, in the
	// terminal: its block of ports, free.
	ports, err := agentlife.EnsurePorts(home, name)
	if err != nil {
		return err
	}
	a.Ports = ports
	if err := agentlife.CheckPortsFree(name, ports); err != nil {
		return auditRefusal("agent start", name, Refused(err))
	}
	if off {
		auditNotices("agent start", name, []string{agentlife.NoSandboxWarning(name)})
		if !f.foreground { // in the foreground the supervisor says it here itself
			fmt.Fprintln(c.ErrOrStderr(), agentlife.NoSandboxWarning(name))
		}
	}
	if !a.NoSandbox {
		// The kernel the harness's sandbox needs is started here, from
		// the owner's terminal, when none runs: started by the
		// supervisor's sandbox run instead, it would sit in the
		// supervisor's tree (the unit's cgroup) and end with the agent.
		kc, err := kernelClient(c.Context())
		if err != nil {
			return err
		}
		kc.Close()
	}
	if !off {
		if a, err = ensureModel(c.Context(), home, a); err != nil {
			return err
		}
	}
	// A start ends a move's pause.
	if err := caps.Unpause(home, name); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	switch {
	case f.foreground:
		return superviseHere(c, home, name, self, agentlife.ModeForeground, c.ErrOrStderr())
	case userManagerRuns():
		err = startUnit(c, home, self, a)
	default:
		err = startBackground(c, home, self, a)
	}
	if err != nil {
		return err
	}
	return printStatus(c, home, a, f.asJSON)
}

// superviseHere runs the supervisor in this process until SIGINT or
// SIGTERM.
func superviseHere(c *cobra.Command, home, name, self, mode string, stderr io.Writer) error {
	// Out of reach of the owner's other processes (/proc/PID/mem,
	// ptrace, environ), which include an agent's harness with its
	// sandbox off; the harness is dumpable again once it execs.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := agentlife.Config{Home: home, Agent: name, Lnk: self, Mode: mode, Stderr: stderr}
	if mode == agentlife.ModeForeground {
		cfg.Started = func(r agentlife.Record) {
			fmt.Fprintf(stderr, "lnk: agent %s's harness started (pid %d, start %d, sandbox %s); its log: %s\n", name, r.HarnessPID, r.Starts, onOff(r.Sandbox), r.Log)
		}
	}
	err := agentlife.Supervise(ctx, cfg)
	return startErr(name, err)
}

// startErr maps a supervisor's first-start error to an exit code.
func startErr(name string, err error) error {
	var taken *agentlife.PortTakenError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &taken):
		return auditRefusal("agent start", name, Refused(err))
	case errors.Is(err, caps.ErrNoSandboxRefused):
		return noSandboxRefused(name, err, "lnk agent start --sandbox "+name+" turns its sandbox back on")
	case errors.Is(err, agentlife.ErrRunning):
		return Fail(ExitFailure, err, "lnk agent restart "+name+" starts it again")
	}
	return err
}

// noSandboxRefused is lnk agent start's refusal of a sandbox off the
// machine refuses (caps.ErrNoSandboxRefused), audited, with hint; any
// other error (machine.toml unreadable) is returned as it is.
func noSandboxRefused(name string, err error, hint string) error {
	if errors.Is(err, caps.ErrNoSandboxRefused) {
		return auditRefusal("agent start", name, Refused(err, hint))
	}
	return err
}

// startBackground starts lnk agent supervise in a session of its own and
// waits until its harness started, or it ended, saying why.
func startBackground(c *cobra.Command, home, self string, a *caps.Agent) error {
	// The supervisor outlives this lnk: nothing its shell left open
	// passes to it.
	if err := cloexec.MarkInherited(); err != nil {
		return err
	}
	var why bytes.Buffer
	cmd := exec.Command(self, "agent", "supervise", "--mode", agentlife.ModeBackground, a.Name)
	cmd.Dir = "/" // it holds no folder of the terminal's
	cmd.Stderr = &why
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	deadline := time.After(startWait)
	for {
		select {
		case err := <-ended:
			msg := bytes.TrimSpace(why.Bytes())
			if len(msg) == 0 {
				return fmt.Errorf("agent %s's supervisor ended before its harness started: %v", a.Name, err)
			}
			// Its own words, as it would have said them in the terminal.
			io.WriteString(c.ErrOrStderr(), string(msg)+"\n")
			return &ExitError{Code: exitOf(err), Silent: true, Err: errors.New(string(msg))}
		case <-deadline:
			return fmt.Errorf("agent %s's supervisor (pid %d) did not start its harness within %s; lnk agent status %s shows it", a.Name, cmd.Process.Pid, startWait, a.Name)
		case <-time.After(20 * time.Millisecond):
		}
		st, err := agentlife.ReadStatus(home, a)
		if err != nil {
			return err
		}
		if st.Running && st.Record != nil && st.Record.PID == cmd.Process.Pid && st.Record.Starts > 0 {
			return nil // its stderr, a pipe no one reads from now, it ignores (SIGPIPE)
		}
	}
}

func exitOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	return ExitFailure
}

func newAgentSupervise() *cobra.Command {
	var mode string
	c := &cobra.Command{
		Use:    "supervise NAME",
		Short:  "Run agent NAME's supervisor (what lnk agent start and the agent's unit run)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			switch mode {
			case agentlife.ModeForeground, agentlife.ModeBackground, agentlife.ModeUnit:
			default:
				return Usage("--mode is foreground, background or unit")
			}
			// Started in the background, its stderr is a pipe lnk agent
			// start stops reading once the harness runs: a write there
			// then fails, and never kills the supervisor.
			signal.Ignore(syscall.SIGPIPE)
			self, err := os.Executable()
			if err != nil {
				return err
			}
			var stderr io.Writer = c.ErrOrStderr()
			if mode == agentlife.ModeBackground {
				stderr = nil // the log only
			}
			return superviseHere(c, os.Getenv("HOME"), args[0], self, mode, stderr)
		},
	}
	c.Flags().StringVar(&mode, "mode", agentlife.ModeForeground, "how it was started: foreground, background or unit")
	return c
}

// userManagerRuns says whether a systemd user manager answers.
func userManagerRuns() bool {
	if _, err := exec.LookPath("systemctl"); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "systemctl", "--user", "show-environment").Run() == nil
}

// startUnit writes the agent's unit and starts it.
func startUnit(c *cobra.Command, home, self string, a *caps.Agent) error {
	began := time.Now().UTC()
	p, err := agentlife.InstallUnit(home, os.Getenv("XDG_CONFIG_HOME"), self, a)
	if err != nil {
		return err
	}
	for _, args := range [][]string{{"daemon-reload"}, {"restart", agentlife.UnitName(a.ID)}} {
		out, err := exec.Command("systemctl", append([]string{"--user"}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("systemctl --user %s: %v: %s", args[0], err, bytes.TrimSpace(out))
		}
	}
	fmt.Fprintf(c.ErrOrStderr(), "lnk: agent %s runs as the user unit %s (%s)\n", a.Name, agentlife.UnitName(a.ID), p)
	deadline := time.Now().Add(startWait)
	for time.Now().Before(deadline) {
		st, err := agentlife.ReadStatus(home, a)
		if err != nil {
			return err
		}
		if st.Running && st.Record != nil && st.Record.Mode == agentlife.ModeUnit && st.Record.Starts > 0 && !st.Record.Since.Before(began) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("agent %s's unit did not start its harness within %s; journalctl --user -u %s says why", a.Name, startWait, agentlife.UnitName(a.ID))
}
