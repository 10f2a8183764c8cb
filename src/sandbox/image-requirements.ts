/**
 * What an image must hold to serve as a box: exactly the programs drydock runs in a box, each with
 * what breaks without it. The probe is one POSIX sh script (bash may be what is missing) that
 * prints a line per requirement; `parseProbe` reads them. Pure (the probe is read from its file once).
 */
import { boxScript } from "../util/box-script.js";

export interface ImageRequirement {
  name: string;
  /** What fails without it, in words for the person choosing the image. */
  breaks: string;
  /** How to add it on a Debian-based image. */
  fix: string;
  /**
   * Whether no session works without it (a shell, git, the box user); the others break only
   * some tools (aider, code_search, egress).
   */
  essential: boolean;
}

export const IMAGE_REQUIREMENTS: readonly ImageRequirement[] = [
  {
    name: "bash",
    breaks: "every tool: the bash tool's persistent shell and every script drydock runs in a box are bash",
    essential: true,
    fix: "apt-get install bash",
  },
  {
    name: "coreutils",
    breaks:
      "the bash tool frames output with printf and a raw terminal (stty); the file tools and git_diff use the others",
    essential: true,
    fix: "apt-get install coreutils",
  },
  {
    name: "grep, sed, find",
    breaks: "file_editor, code_search and the aider tools' workspace checks",
    essential: true,
    fix: "apt-get install grep sed findutils",
  },
  {
    name: "procps",
    breaks:
      "a bash command past its time limit or cancelled cannot be stopped (its processes are found with pgrep), nor an aider job (pkill)",
    essential: true,
    fix: "apt-get install procps",
  },
  {
    name: "git",
    breaks:
      "sessions cannot start (the repository's snapshot is committed in the box); session_diff, session_apply and git_diff fail",
    essential: true,
    fix: "apt-get install git",
  },
  {
    name: "tar",
    breaks: "sessions cannot start: the repository is unpacked in the box with tar",
    essential: true,
    fix: "apt-get install tar",
  },
  {
    name: "python3",
    breaks:
      "aider_ai_code cannot reach the LLM gateway and --egress cannot reach its proxy (drydock's relay in the box is Python), aider cannot run, and the file tools and git_diff take an exec per call",
    essential: false,
    fix: "apt-get install python3 python3-venv",
  },
  {
    name: "universal-ctags",
    breaks: "code_search fails (it needs universal-ctags with JSON output)",
    essential: false,
    fix: "apt-get install universal-ctags",
  },
  {
    name: "aider",
    breaks: "aider_ai_code and aider_list_models fail (they run `aider` from PATH in the box)",
    essential: false,
    fix: "pip install aider-chat in a venv, with its launcher on PATH (see Dockerfile.sandbox)",
  },
  {
    name: "user 1000",
    breaks:
      "the box runs as uid 1000; without a passwd entry, programs that look the user up (git, pip --user, ssh) fail or misbehave",
    essential: true,
    fix: "useradd --uid 1000 --create-home --shell /bin/bash agent",
  },
];

/**
 * Prints `ok|missing <TAB> name <TAB> detail` for each requirement; uses only sh builtins
 * (image-probe.sh).
 */
export const PROBE_SCRIPT = boxScript("sandbox/image-probe.sh");

export interface RequirementResult {
  requirement: ImageRequirement;
  ok: boolean;
  detail: string;
}

/** Reads the probe's output; a requirement the probe did not report is missing. */
export function parseProbe(output: string): RequirementResult[] {
  const lines = new Map<string, { ok: boolean; detail: string }>();
  for (const line of output.split("\n")) {
    const [status, name, detail = ""] = line.split("\t");
    if ((status === "ok" || status === "missing") && name) lines.set(name, { ok: status === "ok", detail });
  }
  return IMAGE_REQUIREMENTS.map((requirement) => {
    const line = lines.get(requirement.name);
    return line
      ? { requirement, ...line }
      : { requirement, ok: false, detail: "the probe did not report it (the check script stopped early)" };
  });
}
