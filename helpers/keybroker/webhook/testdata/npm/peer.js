// A live peer for helpers/keybroker/webhook's tests: reads one JSON
// request on stdin and answers on stdout with the npm package
// standardwebhooks. {"op":"sign",secret,id,timestamp,body} prints the
// signature header; {"op":"verify",secret,id,timestamp,signature,body}
// prints "ok" or the package's refusal.
const { Webhook } = require("standardwebhooks");
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const wh = new Webhook(req.secret);
  if (req.op === "sign") {
    process.stdout.write(wh.sign(req.id, new Date(req.timestamp * 1000), req.body));
    return;
  }
  try {
    wh.verify(req.body, {
      "webhook-id": req.id,
      "webhook-timestamp": String(req.timestamp),
      "webhook-signature": req.signature,
    }, { jsonParse: false });
    process.stdout.write("ok");
  } catch (e) {
    process.stdout.write("refused: " + e.message);
  }
});
