// sbx image: pull, list and remove the images sandboxes start from (docs/images.md).
// Here: the declarations of its verbs; each verb's run code is its own module.

import type { Command } from "commander";
import { type Bind, declareNoun, withExamples } from "../../command.js";

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "image",
    summary: "pull, list and remove images",
    description:
      "Images are kept in the local backend's store, each blob once, by its sha256 digest.\n" +
      "A reference is an OCI image layout directory (oci:DIR[:TAG]), one as a tar file\n" +
      "(oci-archive:FILE[:TAG], as skopeo copy writes it) or a registry\n" +
      "reference as docker reads one ([REGISTRY/]REPO[:TAG][@sha256:DIGEST]; no registry\n" +
      "is Docker Hub). Plain HTTP only to this machine's loopback or a registry named in\n" +
      "SBX_INSECURE_REGISTRIES. These commands work on the local backend's store.",
    verbs: [declarePull, declareImport, declareList, declareRm],
    examples: [
      { command: "sbx image pull oci:./layout:1.0", description: "from an OCI layout directory" },
      { command: "sbx image pull alpine:3.20", description: "from Docker Hub" },
      { command: "sbx image list", description: "what is in the store" },
    ],
  });
}

function declarePull(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("pull")
    .summary("pull an image into the store")
    .description(
      "Pull an image: its manifest (from a multi-platform index, the one for this machine's\n" +
        "platform), its config and its layers, each checked against its sha256 before it is\n" +
        "kept. A tag is resolved now to a manifest digest, which is what the image is pinned by.",
    )
    .argument("<ref>", "oci:DIR[:TAG], oci-archive:FILE[:TAG] or [REGISTRY/]REPO[:TAG][@sha256:DIGEST]")
    .option("--json", "print the image as JSON")
    .action(bind(() => import("./pull.js")));
  withExamples(cmd, [
    { command: "sbx image pull oci:/srv/images/tools:2", description: "tag 2 of an OCI layout" },
    { command: "sbx image pull oci-archive:tools.tar:2", description: "a file skopeo copy wrote" },
    { command: "sbx image pull 127.0.0.1:5000/tools:2", description: "a registry on this machine (HTTP)" },
  ]);
}

function declareImport(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("import")
    .summary("import an image from an OCI archive file")
    .description(
      "Import an image from FILE, an OCI layout as a tar file (what skopeo copy … oci-archive:FILE\n" +
        "writes): the same as sbx image pull oci-archive:FILE[:TAG], for a machine without registry access.",
    )
    .argument("<file>", "FILE or FILE:TAG")
    .option("--json", "print the image as JSON")
    .action(bind(() => import("./import.js")));
  withExamples(cmd, [{ command: "sbx image import python.tar:3.12", description: "tag 3.12 of the archive" }]);
}

function declareList(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .alias("ls")
    .summary("list images")
    .description("List the images in the store: digest, references, platform and size.")
    .option("--json", "print {images: [...]}")
    .action(bind(() => import("./list.js")));
  withExamples(cmd, [{ command: "sbx image list", description: "every image" }]);
}

function declareRm(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("remove an image")
    .description(
      "Remove an image from the store (by a reference it was pulled as, its digest or a\n" +
        "unique prefix of it), and every blob no other image uses. Sandboxes made from it\n" +
        "keep their own root.",
    )
    .argument("<ref>", "a reference it was pulled as, or its digest")
    .option("--json", "print {removed, blobs_removed}")
    .action(bind(() => import("./rm.js")));
  withExamples(cmd, [{ command: "sbx image rm 127.0.0.1:5000/tools:2", description: "remove it" }]);
}
