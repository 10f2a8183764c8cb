/** The service the aider tools need from the server, added to ToolServices. */
import type { AiderService } from "./aider-service.js";

declare module "../tool.js" {
  interface ToolServices {
    aider: AiderService;
  }
}

export {};
