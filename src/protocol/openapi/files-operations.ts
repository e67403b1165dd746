// The files routes of the OpenAPI document: into and out of a sandbox's workspace
// (/sandbox/{id}/files) and a named volume (/volume/{volume}/files), the same two
// operations over a different root. See docs/protocol.md, "Files".

import { FileStat, FileUpload } from "../schemas/system.js";
import { StringEnum, Type } from "../schemas/base.js";
import { FILE_MODE_HEADER, FILE_TYPE_HEADER, OCTET_STREAM, TAR_CONTENT_TYPE } from "../types.js";
import { flag, header, json, type OperationSpec, replayed } from "./operation-spec.js";

/** "/workspace" (a sandbox's), or "" (a volume's own root). */
type Root = "/workspace" | "";

const what = (root: Root) => (root === "" ? "a named volume (sbx)" : "the workspace");

export function filesPut(root: Root): OperationSpec {
  return {
    summary: `A file, or a tar stream unpacked, into ${what(root)}`,
    tag: "files",
    query: {
      path: {
        schema: Type.String({ minLength: 1 }),
        description: `Where, inside ${root || "the volume (from its own /)"}.`,
        required: true,
      },
      mode: { schema: Type.String({ pattern: "^0?[0-7]{3,4}$" }), description: "Permission bits in octal." },
      size: {
        schema: Type.String({ pattern: "^[0-9]+$" }),
        description:
          "Bytes the upload will write (a file's size, a tree's file bytes), when the sender knows: refused with 413 workspace_full, before anything is written, when more than the room left (sbx).",
      },
    },
    body: {
      required: true,
      content: {
        [OCTET_STREAM]: Type.String({ format: "binary" }),
        [TAR_CONTENT_TYPE]: Type.String({ format: "binary" }),
      },
    },
    responses: { 201: { description: "What was written.", content: json(FileUpload), headers: replayed } },
    errors: ["invalid_path", "invalid_archive", "path_conflict", "workspace_full"],
  };
}

export function filesGet(root: Root): OperationSpec {
  return {
    summary: `A file, or a directory as a tar stream, out of ${what(root)}`,
    tag: "files",
    query: {
      path: {
        schema: Type.String({ minLength: 1 }),
        description: `What, inside ${root || "the volume (from its own /)"}.`,
        required: true,
      },
      stat: flag("Only say what the path names (JSON)."),
      usage: flag(
        "With stat: a directory's allocated bytes too (its files', walked without following symlinks) (sbx).",
      ),
      nofollow: flag(
        "A symlink at the path is itself what is read (a tar stream of the link, or stat type symlink with its target), never followed (sbx).",
      ),
    },
    headers: { Accept: header(`\`${TAR_CONTENT_TYPE}\`: a file as a tar stream too.`) },
    responses: {
      200: {
        description: "The bytes of a file, a tar stream of a directory, or (stat=true) what the path names.",
        content: {
          ...json(FileStat),
          [OCTET_STREAM]: Type.String({ format: "binary" }),
          [TAR_CONTENT_TYPE]: Type.String({ format: "binary" }),
        },
        headers: {
          [FILE_TYPE_HEADER]: header(
            "Bytes and tar answers: file, directory, or (nofollow) symlink.",
            StringEnum(["file", "directory", "symlink"]),
          ),
          [FILE_MODE_HEADER]: header(
            "Bytes and tar answers: permission bits in octal.",
            Type.String({ pattern: "^0[0-7]{3,4}$" }),
          ),
        },
      },
    },
    errors: ["invalid_path", "file_not_found", "path_conflict"],
  };
}
