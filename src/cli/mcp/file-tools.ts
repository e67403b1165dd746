// read_file / write_file: files under /workspace for a model, through the files API
// `sbx cp` uses. A read is bounded (its first bytes, the rest counted); a write is
// sent once with a fresh key, and says the sha256 the backend received.

import { type Static, Type } from "@sinclair/typebox";
import { FilesApi } from "../../client/files.js";
import { UsageError } from "../../common/errors.js";
import { CommandArgs, sandboxOf } from "./command-tools.js";
import { ReceiptIdsField, receipted } from "./evidence.js";
import { defineTool, IdempotencyKeyArg, toolKey } from "./tool.js";

const PathArg = Type.String({
  minLength: 1,
  description: "A path under /workspace: absolute (/workspace/src/a.ts) or relative to it (src/a.ts).",
});

const ReadInput = Type.Object(
  {
    path: PathArg,
    sandbox: CommandArgs.sandbox,
  },
  { additionalProperties: false },
);

export const readFile = defineTool({
  name: "read_file",
  title: "Read a file",
  description:
    "Reads a file under /workspace. Bounded: a file longer than the server's limit comes back as its first bytes, with omitted_bytes counting the rest. Binary content comes back as base64 (encoding says which). Reads only.",
  input: ReadInput,
  output: Type.Object({
    path: Type.String(),
    size: Type.Integer({ minimum: 0 }),
    mode: Type.String(),
    content: Type.String(),
    encoding: Type.String({ description: "utf8, or base64 when the bytes are not text." }),
    omitted_bytes: Type.Integer({ minimum: 0, description: "Bytes of the file past what content carries." }),
  }),
  mutating: false,
  async run(args: Static<typeof ReadInput>, call) {
    const sandbox = sandboxOf(args, call);
    const files = new FilesApi((await call.api()).http);
    const stat = await files.stat(sandbox, args.path);
    if (stat === null) throw new UsageError(`no file ${args.path} in sandbox ${sandbox}`);
    if (stat.type !== "file") {
      throw new UsageError(
        `${args.path} is a ${stat.type}, not a file`,
        'list it with run_command {"argv": ["ls", "-la", "…"]}',
      );
    }
    const limit = call.settings.maxOutputBytes;
    const download = await files.download(sandbox, args.path, { tar: false });
    const pieces: Buffer[] = [];
    let held = 0;
    for await (const chunk of download.chunks) {
      pieces.push(Buffer.from(chunk));
      held += chunk.length;
      // Enough: leaving the loop ends the read.
      if (held >= limit) break;
    }
    const bytes = Buffer.concat(pieces).subarray(0, limit);
    const text = Buffer.from(bytes.toString("utf8"), "utf8").equals(bytes);
    const content = text ? bytes.toString("utf8") : bytes.toString("base64");
    const omitted = Math.max(0, stat.size - bytes.length);
    return {
      structured: {
        path: stat.path,
        size: stat.size,
        mode: stat.mode,
        content,
        encoding: text ? "utf8" : "base64",
        omitted_bytes: omitted,
      },
      text: `${stat.path} (${stat.size} bytes${text ? "" : ", base64"}${omitted > 0 ? `; the first ${bytes.length} shown, ${omitted} omitted` : ""})\n${content}`,
    };
  },
});

const WriteInput = Type.Object(
  {
    path: PathArg,
    content: Type.String({ description: "The file's whole content (it replaces what is there)." }),
    encoding: Type.Optional(
      Type.Union([Type.Literal("utf8"), Type.Literal("base64")], {
        description: "How content is given (default utf8).",
      }),
    ),
    mode: Type.Optional(
      Type.String({ pattern: "^0?[0-7]{3,4}$", description: 'Permission bits in octal, e.g. "0755".' }),
    ),
    sandbox: CommandArgs.sandbox,
    idempotency_key: IdempotencyKeyArg,
  },
  { additionalProperties: false },
);

export const writeFile = defineTool({
  name: "write_file",
  title: "Write a file",
  description:
    "Writes a file under /workspace, replacing what is there. Sent once; the answer says the bytes and sha256 the backend received. Writing the same content again is harmless.",
  input: WriteInput,
  output: Type.Object({
    path: Type.String(),
    bytes: Type.Integer({ minimum: 0 }),
    sha256: Type.String(),
    ...ReceiptIdsField,
  }),
  mutating: true,
  async run(args: Static<typeof WriteInput>, call) {
    const sandbox = sandboxOf(args, call);
    const files = new FilesApi(receipted(call, sandbox, (await call.api()).http));
    const bytes = Buffer.from(args.content, args.encoding === "base64" ? "base64" : "utf8");
    const answer = await files.upload(
      sandbox,
      args.path,
      (async function* () {
        yield bytes;
      })(),
      {
        tar: false,
        idempotencyKey: toolKey("write_file", args.idempotency_key),
        size: bytes.length,
        ...(args.mode === undefined ? {} : { mode: Number.parseInt(args.mode, 8) }),
      },
    );
    return {
      structured: { path: answer.path, bytes: answer.bytes, sha256: answer.sha256, receipt_ids: call.receipts },
      text: `wrote ${answer.bytes} bytes to ${answer.path} (sha256 ${answer.sha256})`,
    };
  },
});
