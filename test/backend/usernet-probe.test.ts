// Whether --network (user) can be had is tried as a sandbox would have it: slirp4netns
// runs as the sandbox's uid (never root) inside the user namespace the sandbox's leader
// is started in, and opens the tun device there. A root-only device (mode 0600, as the
// kernel makes it without udev) means no sandbox can have it: /health says so with the
// reason and the fix, and a create that asks for it is refused (network_unavailable)
// instead of a sandbox whose every command fails to start. The device is the probe's
// option here, so both answers are tried on any machine whatever /dev/net/tun is.

import { afterAll, beforeAll, expect, it } from "vitest";
import { probeUserNet } from "../../src/backend/drivers/bwrap/user-net.js";
import { daemonHost } from "../../src/backend/drivers/driver.js";
import { describeNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";
import { type TunDevices, tunDevices } from "../support/tun-devices.js";
import { startTestBackend, type TestBackend } from "./support.js";

describeNeeding(
  ["root", "bwrap", "slirp4netns"],
  "the user-network probe opens the tun device as a sandbox's uid",
  () => {
    let tun: TunDevices;
    beforeAll(() => {
      tun = tunDevices();
    });
    const probe = (tunDevice: string) => probeUserNet({ hostPath: daemonHost().path, asRoot: true, tunDevice });

    it("a root-only device (0600): not available, saying the mode, who cannot open it, and the fix", () => {
      const p = probe(tun.rootOnly);
      expect(p.available).toBe(false);
      expect(p.reason).toBe(
        `${tun.rootOnly} is mode 0600, owned by root: a sandbox's uid cannot open it, and slirp4netns runs as that ` +
          `uid for a sandbox (never as root); fix: chmod 0666 ${tun.rootOnly} (as udev's default rule makes it), ` +
          `or keep it so with a udev rule (KERNEL=="tun", MODE="0666" in /etc/udev/rules.d/)`,
      );
    });

    it("a device every uid may open (0666): available", () => {
      expect(probe(tun.open)).toMatchObject({ available: true, reason: null });
    });

    it("no device at all: not available, saying so", () => {
      const p = probe(tun.missing);
      expect(p.available).toBe(false);
      expect(p.reason).toContain(`${tun.missing} does not exist`);
    });

    describeNeeding("tools", "a backend whose tun device is root-only", () => {
      let b: TestBackend;
      beforeAll(async () => {
        b = await startTestBackend({ drivers: { tunDevice: tun.rootOnly } });
      });
      afterAll(async () => {
        await b.stop();
      });

      it("says user networking is not available in /health, with the reason", async () => {
        const health = (await b.api("GET", "/api/v1/health")).json;
        expect(health.isolation.user_network.available).toBe(false);
        expect(health.isolation.user_network.reason).toContain(`${tun.rootOnly} is mode 0600, owned by root`);
      });

      it("refuses --network (user) at create with network_unavailable, the reason and the fix; nothing is made", async () => {
        for (const body of [
          { name: "net1", isolation: "bwrap", network_mode: "user" },
          { name: "net1", isolation: "bwrap", network: true },
        ]) {
          const res = await b.api("POST", "/api/v1/sandbox/create", { body });
          expect(res.status, res.text).toBe(400);
          expect(res.json.error).toMatchObject({
            code: "network_unavailable",
            details: { network_mode: "user", reason: expect.stringContaining(`chmod 0666 ${tun.rootOnly}`) },
          });
          expect(res.json.error.message).toContain("network user is not available");
        }
        expect((await b.api("GET", "/api/v1/sandbox/net1")).status).toBe(404);
        // What needs no tun device is still had.
        const host = await b.api("POST", "/api/v1/sandbox/create", {
          body: { name: "net2", isolation: "bwrap", network_mode: "host" },
        });
        expect(host.status, host.text).toBe(201);
      });
    });

    describeNeeding("tools", "a --network sandbox made where it worked, on a backend where it no longer can", () => {
      const dir = tempDir("sbx-be-");
      let b: TestBackend;
      beforeAll(async () => {
        const before = await startTestBackend({ drivers: { tunDevice: tun.open } }, dir);
        const res = await before.api("POST", "/api/v1/sandbox/create", {
          body: { name: "net", isolation: "bwrap", network_mode: "user" },
        });
        expect(res.status, res.text).toBe(201);
        await before.stop();
        b = await startTestBackend({ drivers: { tunDevice: tun.rootOnly } }, dir);
      });
      afterAll(async () => {
        await b.stop();
      });

      it("is shown as not available, with the reason; its commands fail to start saying the same", async () => {
        const shown = await b.api("GET", "/api/v1/sandbox/net");
        expect(shown.status, shown.text).toBe(200);
        expect(shown.json.network_mode).toBe("user");
        expect(shown.json.network_status).toEqual({
          available: false,
          reason: expect.stringContaining(`${tun.rootOnly} is mode 0600, owned by root`),
        });
        const ran = await b.api("POST", "/api/v1/sandbox/net/execute", { body: { command: ["true"] } });
        expect(ran.status).toBe(500);
        expect(ran.json.error.code).toBe("sandbox_start_failed");
        expect(ran.json.error.message).toContain("network user is not available");
        // A sandbox without that network is shown as it is.
        expect(
          (await b.api("POST", "/api/v1/sandbox/create", { body: { name: "off", isolation: "bwrap" } })).status,
        ).toBe(201);
        expect((await b.api("GET", "/api/v1/sandbox/off")).json.network_status).toEqual({
          available: true,
          reason: null,
        });
      });
    });

    describeNeeding("tools", "a backend whose tun device every uid may open", () => {
      let b: TestBackend;
      beforeAll(async () => {
        b = await startTestBackend({ drivers: { tunDevice: tun.open } });
      });
      afterAll(async () => {
        await b.stop();
      });

      it("says user networking is available, and creates a --network sandbox", async () => {
        expect((await b.api("GET", "/api/v1/health")).json.isolation.user_network).toMatchObject({
          available: true,
          reason: null,
        });
        const res = await b.api("POST", "/api/v1/sandbox/create", {
          body: { name: "net", isolation: "bwrap", network_mode: "user" },
        });
        expect(res.status, res.text).toBe(201);
        expect(res.json.network_mode).toBe("user");
      });
    });
  },
);
