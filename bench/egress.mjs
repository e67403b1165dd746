// The egress section of npm run bench (bench/run.mjs; docs/network.md): a 200 MB
// download through a sandbox's egress proxy (network allow-list: curl inside the
// sandbox, HTTP_PROXY set, the name resolved by the proxy) next to the same download
// from the host straight to the server, in turns in the same run; and the time to the
// first byte of a small file both ways (a connection's set-up through the proxy: the
// sandbox's loopback forwarder, the Unix socket, the policy, the proxy's connect).
// curl measures each transfer itself (-w), so sbx exec's own cost is not in the figures.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const SERVER_IP = "127.0.0.2";
const SIZE = 200 * 1000 * 1000;

/** A server in a process of its own (the bench blocks in spawnSync): /blob is SIZE bytes, /small 1 byte. */
function startServer() {
  const code = `
    const http = require("node:http");
    const chunk = Buffer.alloc(1 << 20, 120);
    const server = http.createServer((req, res) => {
      if (req.url === "/small") return res.end("x");
      res.writeHead(200, { "content-length": ${SIZE} });
      let left = ${SIZE};
      const more = () => {
        while (left > 0) {
          const n = Math.min(left, chunk.length);
          left -= n;
          if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return res.once("drain", more);
        }
        res.end();
      };
      more();
    });
    server.listen(0, "${SERVER_IP}", () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout.once("data", (d) => resolve({ port: Number(String(d).trim()), stop: () => child.kill() }));
    child.once("exit", (c) => reject(new Error(`the bench's server exited ${c}`)));
  });
}

export async function egressBench({ env, sbxScript, home, runs, table, fmt, median }) {
  const sbx = (args, more = env) => {
    const r = spawnSync(process.execPath, ["--", sbxScript, ...args], { env: more, maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`sbx ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    return r.stdout.toString();
  };
  const server = await startServer();
  // The daemon resolves the bench's name from a hosts file (the system's resolver is never asked):
  // `sbx daemon run` in the foreground of a child (daemon start passes no SBX_EGRESS_HOSTS on).
  const hosts = path.join(home, "egress-hosts");
  fs.writeFileSync(hosts, `${SERVER_IP} blob.test\n`);
  spawnSync(process.execPath, ["--", sbxScript, "daemon", "stop"], { env, stdio: "ignore" });
  const daemon = spawn(process.execPath, ["--", sbxScript, "daemon", "run"], {
    env: { ...env, SBX_EGRESS_HOSTS: hosts },
    stdio: "ignore",
  });
  try {
    for (let i = 0; spawnSync(process.execPath, ["--", sbxScript, "daemon", "status"], { env }).status !== 0; i++) {
      if (i > 600) throw new Error("the bench's daemon did not answer");
      spawnSync("sleep", ["0.1"]);
    }
    sbx(["sandbox", "create", "egress", "--allow-domain", "blob.test", "--allow-cidr", `${SERVER_IP}/32`]);
    const url = (p, host) => `http://${host}:${server.port}${p}`;
    const curl = (u, what) => ["curl", "-sS", "-o", "/dev/null", "-w", what, u];
    // Each figure only from a whole answer: 200, and every byte of it.
    const figure = (out, p) => {
      const [code, size, value] = String(out).trim().split(" ");
      if (code !== "200" || Number(size) !== (p === "/blob" ? SIZE : 1)) throw new Error(`${p}: ${out}`);
      return Number(value);
    };
    const direct = (p, what) => {
      const argv = curl(url(p, SERVER_IP), `%{http_code} %{size_download} ${what}`);
      const r = spawnSync(argv[0], argv.slice(1));
      if (r.status !== 0) throw new Error(`curl: ${r.stderr}`);
      return figure(r.stdout, p);
    };
    const proxied = (p, what) =>
      figure(
        sbx(["exec", "-s", "egress", "--", ...curl(url(p, "blob.test"), `%{http_code} %{size_download} ${what}`)]),
        p,
      );
    const subjects = [
      { key: "direct", bytesPerS: () => direct("/blob", "%{speed_download}") },
      { key: "proxy", bytesPerS: () => proxied("/blob", "%{speed_download}") },
      { key: "directFirst", s: () => direct("/small", "%{time_starttransfer}") },
      { key: "proxyFirst", s: () => proxied("/small", "%{time_starttransfer}") },
    ];
    const got = Object.fromEntries(subjects.map((s) => [s.key, []]));
    const n = Math.max(3, Math.min(runs, 5));
    for (const s of subjects) (s.bytesPerS ?? s.s)(); // warm up
    for (let i = 0; i < n; i++) for (const s of subjects) got[s.key].push((s.bytesPerS ?? s.s)());
    const mbps = (k) => median(got[k]) / 1e6;
    const ms = (k) => median(got[k]) * 1000;
    table(
      "egress",
      "Egress through the allow-list proxy",
      ["what", "median", "ratio to direct"],
      [
        ["200 MB download, host straight to the server (curl)", `${fmt(mbps("direct"))} MB/s`, "1.00"],
        [
          "the same through a sandbox's egress proxy (curl in the sandbox, HTTP_PROXY)",
          `${fmt(mbps("proxy"))} MB/s`,
          fmt(mbps("proxy") / mbps("direct"), 2),
        ],
        ["time to first byte of 1 byte, host straight to the server", `${fmt(ms("directFirst"), 2)} ms`, "1.00"],
        [
          "the same through the proxy (connection set-up: forwarder, socket, policy, connect)",
          `${fmt(ms("proxyFirst"), 2)} ms`,
          fmt(ms("proxyFirst") / ms("directFirst"), 2),
        ],
      ],
      [
        `${n} rounds in turns after one warm-up; curl's own -w figures (speed_download, time_starttransfer), so sbx exec's cost is not in them. Target (issue 34): the proxy path at least 50 % of the direct download.`,
      ],
    );
  } finally {
    spawnSync(process.execPath, ["--", sbxScript, "daemon", "stop"], { env, stdio: "ignore" });
    daemon.kill();
    server.stop();
  }
}
