/**
 * One LLM gateway per session, started on the session's first aider call: its socket sits in the
 * session's gateway directory on the host (the box reaches it through drydock's relay, box-relay.ts)
 * and it closes when the session is removed.
 */
import { join } from "node:path";
import {
  LlmGateway,
  type LlmGatewayOptions,
  type LlmLimits,
  type LlmMode,
  type OfflineModel,
  type ProviderKeys,
  type UpstreamProvider,
} from "../../gateway/index.js";
import { gatewayEntry } from "../../session/audit-entry.js";
import { appendAuditEntry } from "../../session/audit-log.js";
import type { Session } from "../../session/session.js";
import { logger } from "../../util/log.js";
import { ensureRelay, GATEWAY_SOCKET_NAME } from "./box-relay.js";

const log = logger("aider");

export interface GatewayConfig {
  mode: LlmMode;
  keys: ProviderKeys;
  limits: LlmLimits;
  /** Base URLs replacing the providers' own (their hosts are allowed). */
  upstreams?: Partial<Record<UpstreamProvider, string>>;
  allowedHosts?: readonly string[];
  offlineModel?: OfflineModel;
}

export class SessionGateways {
  private readonly gateways = new Map<string, Promise<LlmGateway>>();

  constructor(private readonly config: GatewayConfig) {}

  /** The session's gateway, started if need be, with the relay in the box listening. */
  async forSession(session: Session, signal?: AbortSignal): Promise<LlmGateway> {
    let pending = this.gateways.get(session.id);
    if (!pending) {
      pending = this.start(session);
      this.gateways.set(session.id, pending);
    }
    let gateway: LlmGateway;
    try {
      gateway = await pending;
    } catch (error) {
      this.gateways.delete(session.id);
      throw error;
    }
    await ensureRelay(session.box, session.gatewayDir, signal);
    return gateway;
  }

  private async start(session: Session): Promise<LlmGateway> {
    const options: LlmGatewayOptions = {
      socketPath: join(session.gatewayDir, GATEWAY_SOCKET_NAME),
      mode: this.config.mode,
      keys: this.config.keys,
      limits: this.config.limits,
      label: session.id,
      ...(this.config.upstreams ? { upstreams: this.config.upstreams } : {}),
      ...(this.config.allowedHosts ? { allowedHosts: this.config.allowedHosts } : {}),
      ...(this.config.offlineModel ? { offlineModel: this.config.offlineModel } : {}),
    };
    const gateway = await LlmGateway.start(options);
    // Each model request (refusals too) goes into the session's audit log as it ends.
    const stopAudit = gateway.onExchange((event) => appendAuditEntry(gatewayEntry(session.id, event)));
    session.cleanups.push(async () => {
      this.gateways.delete(session.id);
      stopAudit();
      await gateway.close();
    });
    log.debug(`session ${session.id}: gateway started`);
    return gateway;
  }
}
