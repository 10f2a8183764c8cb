import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "bench/**",
      "examples/**",
      "**/*.js",
      "**/*.mjs",
      // Scripts that run in a browser (the HTML eval report's): plain JavaScript, checked below.
      "!src/**/*.browser.js",
    ],
  },
  ...tseslint.configs.recommended,
  {
    // Browser scripts inlined into a page (one classic script each): the browser's globals only,
    // no Node's, and a name used but never defined is an error.
    files: ["src/**/*.browser.js"],
    languageOptions: { sourceType: "script", ecmaVersion: 2022, globals: { ...globals.browser } },
    rules: {
      "no-undef": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["src/**/*.ts"],
    rules: {
      "no-console": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  { files: ["src/cli/**/*.ts", "test/**/*.ts"], rules: { "no-console": "off" } },
  // The command line prints through one escaper (src/cli/terminal-out.ts). The person's shell
  // (session-shell.ts) is a terminal passed through to the box, raw by nature.
  {
    files: ["src/cli/**/*.ts"],
    ignores: ["src/cli/terminal-out.ts", "src/cli/session-shell.ts"],
    rules: {
      "no-console": "error",
      "no-restricted-properties": [
        "error",
        ...["stdout", "stderr"].map((property) => ({
          object: "process",
          property,
          message:
            "print through src/cli/terminal-out.ts (printOut, printErr, printJson): it escapes what a terminal would act on",
        })),
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "VariableDeclarator[init.type='Identifier'][init.name='process']",
          message:
            "take nothing from `process` by destructuring or aliasing: print through src/cli/terminal-out.ts",
        },
      ],
    },
  },
  // The live page's script (src/server/live/page/) is a browser module: browser globals, no Node.
  { ignores: ["!src/server/live/page/*.js"] },
  {
    files: ["src/server/live/page/*.js"],
    languageOptions: { sourceType: "module", globals: globals.browser },
    rules: { "no-undef": "error", "no-console": "error" },
  },
);
