// sandbox_create / sandbox_stop: a sandbox's life, offered only when `sbx mcp` was
// started with --manage-sandboxes (docs/agents.md); list_files: what is under
// /workspace, read from the directory's tar stream (the files API `sbx cp` uses).

import { type Static, Type } from "@sinclair/typebox";
import * as tarStream from "tar-stream";
import { Api } from "../../client/api.js";
import { FilesApi } from "../../client/files.js";
import { UsageError } from "../../common/errors.js";
import { CommandArgs, sandboxOf } from "./command-tools.js";
import { ReceiptIdsField, receipted } from "./evidence.js";
import { defineTool, IdempotencyKeyArg, Nullable, toolKey } from "./tool.js";

const CreateInput = Type.Object(
  {
    name: Type.String({
      pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$",
      description: "Its name, to give as `sandbox` to the other tools.",
    }),
    network: Type.Optional(Type.Boolean({ description: "Give it a network (default: none)." })),
    image: Type.Optional(
      Type.String({ minLength: 1, description: "An OCI image its root is made from (a registry reference)." }),
    ),
    idempotency_key: IdempotencyKeyArg,
  },
  { additionalProperties: false },
);

const SandboxOutput = Type.Object({
  sandbox_id: Type.String(),
  name: Type.String(),
  status: Type.String(),
  isolation: Type.String(),
  replayed: Type.Boolean({ description: "It was made by an earlier call with the same idempotency_key." }),
  ...ReceiptIdsField,
});

export const sandboxCreate = defineTool({
  name: "sandbox_create",
  title: "Create a sandbox",
  description:
    "Creates a sandbox (an isolated /workspace and environment) by name; the other tools act on it when given its name as `sandbox`. " +
    "A name already taken is refused. To retry after a lost answer, send the same call with the same idempotency_key: the sandbox is made once.",
  input: CreateInput,
  output: SandboxOutput,
  mutating: true,
  manages: true,
  async run(args: Static<typeof CreateInput>, call) {
    const api = new Api(receipted(call, args.name, (await call.api()).http));
    const key = toolKey("sandbox_create", args.idempotency_key);
    const existing = (await api.listSandboxes()).find((s) => s.name === args.name);
    const s = await api.createSandbox(
      {
        name: args.name,
        ...(args.network === undefined ? {} : { network: args.network }),
        ...(args.image === undefined ? {} : { image: args.image }),
      },
      key,
    );
    const replayed = existing?.sandbox_id === s.sandbox_id;
    return {
      structured: {
        sandbox_id: s.sandbox_id,
        name: s.name,
        status: s.status,
        isolation: s.isolation,
        replayed,
        receipt_ids: call.receipts,
      },
      text: `${replayed ? "already made by this key" : "created"}: ${s.name} (${s.sandbox_id}, ${s.isolation})`,
    };
  },
});

const StopInput = Type.Object(
  {
    sandbox: Type.String({
      pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$",
      description: "The sandbox to stop (id or name): named always, never the default.",
    }),
    idempotency_key: IdempotencyKeyArg,
  },
  { additionalProperties: false },
);

export const sandboxStop = defineTool({
  name: "sandbox_stop",
  title: "Stop a sandbox",
  description:
    "Stops a sandbox's environment: every command, process and job in it is ended (their receipts say so); its /workspace is kept and the next command starts it again. Safe to repeat.",
  input: StopInput,
  output: Type.Object({
    sandbox_id: Type.String(),
    name: Type.String(),
    was_running: Type.Boolean(),
    ended: Type.Object({
      executions: Type.Integer(),
      processes: Type.Integer(),
      jobs: Type.Integer(),
      other: Type.Array(Type.String()),
    }),
    ...ReceiptIdsField,
  }),
  mutating: true,
  manages: true,
  async run(args: Static<typeof StopInput>, call) {
    const api = new Api(receipted(call, args.sandbox, (await call.api()).http));
    const r = await api.stopSandbox(args.sandbox, toolKey("sandbox_stop", args.idempotency_key));
    const e = r.ended;
    return {
      structured: {
        sandbox_id: r.sandbox_id,
        name: r.name,
        was_running: r.was_running,
        ended: e,
        receipt_ids: call.receipts,
      },
      text: `${r.name} stopped${r.was_running ? "" : " (it was not running)"}: ended ${e.executions} command(s), ${e.processes} process(es), ${e.jobs} job(s)${e.other.length ? `, and ${e.other.join(", ")}` : ""}`,
    };
  },
});

const ListInput = Type.Object(
  {
    path: Type.Optional(
      Type.String({ minLength: 1, description: "A directory under /workspace (default /workspace itself)." }),
    ),
    depth: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 32, description: "Levels below it to list (default 1: its entries)." }),
    ),
    max_entries: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, description: "At most this many (default 500)." }),
    ),
    sandbox: CommandArgs.sandbox,
  },
  { additionalProperties: false },
);

const Entry = Type.Object({
  path: Type.String({ description: "Relative to the directory listed." }),
  type: Type.String({ description: "file, directory, symlink or other." }),
  size: Type.Integer({ minimum: 0 }),
  mode: Type.String(),
  link_target: Nullable(Type.String()),
});

type EntryT = Static<typeof Entry>;

const TYPES: Record<string, string> = { file: "file", directory: "directory", symlink: "symlink" };

/** The entries of a directory's tar stream down to `depth` levels, at most `max` (more: `truncated`). */
async function entriesOf(
  chunks: AsyncIterable<Uint8Array>,
  depth: number,
  max: number,
): Promise<{ entries: EntryT[]; truncated: boolean }> {
  const extract = tarStream.extract();
  const entries: EntryT[] = [];
  let truncated = false;
  const feeding = (async () => {
    try {
      for await (const chunk of chunks) {
        // Stop feeding once the reader is done with it: after `truncated` it breaks out of
        // the extract (which destroys it), and a destroyed stream never drains.
        if (truncated || extract.destroyed) break;
        if (!extract.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              extract.off("drain", done);
              extract.off("close", done);
              resolve();
            };
            extract.on("drain", done);
            extract.on("close", done);
          });
        }
      }
      if (!extract.destroyed) extract.end();
    } catch (err) {
      extract.destroy(err as Error);
    }
  })();
  for await (const entry of extract) {
    const h = entry.header;
    // Entries are relative to the directory, which is `./` itself.
    const rel = h.name
      .replace(/^(\.\/)+/, "")
      .replace(/\/+$/, "")
      .replace(/^\.$/, "");
    const level = rel === "" ? 0 : rel.split("/").length;
    if (level >= 1 && level <= depth) {
      if (entries.length >= max) {
        truncated = true;
        entry.resume();
        break;
      }
      entries.push({
        path: rel,
        type: TYPES[h.type ?? "file"] ?? "other",
        size: h.size ?? 0,
        mode: `0${((h.mode ?? 0) & 0o7777).toString(8)}`,
        link_target: h.type === "symlink" ? (h.linkname ?? null) : null,
      });
    }
    entry.resume();
  }
  await feeding;
  return { entries, truncated };
}

export const listFiles = defineTool({
  name: "list_files",
  title: "List files",
  description:
    "Lists a directory under /workspace: each entry's path (relative to it), type, size and mode, down to `depth` levels, at most max_entries (truncated says there were more). Reads only.",
  input: ListInput,
  output: Type.Object({
    path: Type.String(),
    entries: Type.Array(Entry),
    truncated: Type.Boolean(),
  }),
  mutating: false,
  async run(args: Static<typeof ListInput>, call) {
    const sandbox = sandboxOf(args, call);
    const files = new FilesApi((await call.api()).http);
    const where = args.path ?? "/workspace";
    const stat = await files.stat(sandbox, where);
    if (stat === null) throw new UsageError(`no directory ${where} in sandbox ${sandbox}`);
    if (stat.type !== "directory") {
      throw new UsageError(`${where} is a ${stat.type}, not a directory`, 'read it with read_file {"path": "…"}');
    }
    const download = await files.download(sandbox, stat.path, { tar: true });
    const { entries, truncated } = await entriesOf(download.chunks, args.depth ?? 1, args.max_entries ?? 500);
    entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const lines = entries.map((e) => `${e.type === "directory" ? `${e.path}/` : e.path}\t${e.size}`);
    return {
      structured: { path: stat.path, entries, truncated },
      text: [
        `${stat.path}: ${entries.length} entr${entries.length === 1 ? "y" : "ies"}${truncated ? " (more not listed: raise max_entries or list a subdirectory)" : ""}`,
        ...lines,
      ].join("\n"),
    };
  },
});
