// Every tool `sbx mcp` has, in the order a client lists them (docs/agents.md).

import { runCommand } from "./command-tools.js";
import { readFile, writeFile } from "./file-tools.js";
import { awaitTool, cancelTool, jobRead, jobRun, jobSubmit } from "./job-tools.js";
import { continueProcess, runProcess, stopProcess } from "./process-tools.js";
import { receiptShow, receiptsInDoubt, sandboxList } from "./receipt-tools.js";
import { listFiles, sandboxCreate, sandboxStop } from "./sandbox-tools.js";
import type { Tool } from "./tool.js";

export const MCP_TOOLS: readonly Tool[] = [
  runCommand,
  runProcess,
  continueProcess,
  stopProcess,
  jobRun,
  jobSubmit,
  jobRead,
  awaitTool,
  cancelTool,
  readFile,
  writeFile,
  listFiles,
  receiptsInDoubt,
  receiptShow,
  sandboxList,
  sandboxCreate,
  sandboxStop,
];
