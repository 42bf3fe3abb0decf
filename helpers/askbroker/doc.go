// Package askbroker asks the owner before a sandbox's call goes through:
// one question, every way there is at once (a desktop dialog, the
// proxy's terminal, the waiting-question store ~/.lnk/questions, and —
// later — the owner's chats), and the first answer counts.
//
// A [Broker] takes a [Question] (what asks, for which sandbox and agent,
// the exact call, and the --allow that would let it through), cleans its
// text ([Clean]), and hands it to every [Asker] that can reach the owner.
// The first answer is committed once: for a question in the store, by
// linking its answer file in place ([Store.Answer]), which a second answer
// cannot replace; the other ways are then withdrawn (a dialog's program is
// killed, a terminal prompt says it was answered elsewhere). No answer
// within the wait (ask_wait: two minutes by default, at most a day) is no,
// and the refusal names the --allow that lets the call through.
//
// A question nobody but a dialog would see is asked on the dialog alone,
// and refused at once where there is no dialog either: it never hangs. It
// waits in the store only while someone answers there — a terminal or a
// chat holding a shared lock in the store ([Store.Answering]).
//
// # Starting it
//
// cmd/lnk-askbroker is started as every broker is (internal/brokerproc;
// helpers/askbroker/askproc starts it for lnk sandbox run's tool bridge)
// with: fd 3, its channel (a SOCK_SEQPACKET socket, one JSON record per
// question and per decision, see [Serve]; [Remote] is its client); fd 4, the store
// folder ~/.lnk/questions opened O_DIRECTORY|O_NOFOLLOW; optionally fd 5,
// the owner's terminal; and where a desktop session is, its dialog
// launcher's channel, the launcher started beside it with the desktop
// session's variables (DISPLAY, WAYLAND_DISPLAY, XAUTHORITY,
// DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR, HOME, LANG) alone.
//
// # Security
//
// It holds the store folder's fd, a terminal's fd, and its launcher's
// channel; the launcher holds the desktop session's variables. It may create and link files in the store, write a
// question to the terminal and read one line back, and start exactly the
// dialog programs and notify-send it finds in /usr/bin, /bin and
// /usr/local/bin (owned by root, writable by no one else) — never one
// found on PATH. Where no dialog shows, a notification ([Notifier]) says
// a question waits in the store; it answers nothing. It trusts the
// kernel's channel for who asks; it trusts no question's text: control,
// bidi and zero-width characters are removed, each line is cut at 600
// characters and a question cut short says so; zenity runs with
// --no-markup and kdialog gets the text escaped, so no text becomes
// markup. It refuses at once: a question with no way to reach the owner, a
// sandbox past its count or rate of questions, a sandbox paused for too
// many refusals, a store folder or question file that is a link or not the
// owner's alone. A terminal's code is four random letters, shown only on
// that terminal, compared in constant time, and never logged; input typed
// before the question was shown is thrown away, so nothing answers ahead.
//
// Confinement (cmd/lnk-askbroker/confine.go) splits the broker in two.
// The broker reads and writes beneath the store alone, executes nothing,
// makes no socket, and links no net. A dialog launcher ([Launcher]), the
// same binary started beside it, holds the desktop session: it executes only the dialog program and notify-send
// found at its start, reads the system's files they load, never the store
// or HOME, and takes from the broker only a question's text, building the
// command line itself. An X dialog needs landlock's scoping off in the
// launcher (libxcb will not fall back from X's abstract socket), which it
// logs at every start.
package askbroker
