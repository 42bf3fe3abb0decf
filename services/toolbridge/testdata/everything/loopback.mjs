// Preloaded into server-everything by the tests (node --import): a server
// it starts on a port listens on 127.0.0.1 only, on a port the system
// picks, and says which on stderr, so no test guesses a free port.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || /^\d+$/.test(String(args[0]))) {
    const cb = args.find((a) => typeof a === "function");
    args = cb ? [0, "127.0.0.1", cb] : [0, "127.0.0.1"];
    this.once("listening", () => console.error(`lnk-test-listening=${this.address().port}`));
  }
  return listen.apply(this, args);
};
