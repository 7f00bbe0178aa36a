import type { ServiceContext } from '../../context.js';
import { RuntimeaGateway } from './gateway.js';

/**
 * The one gateway of a service instance, shared by the runtimea runtime (turns), its status
 * route, the lifecycle restart and shutdown. Keyed by the service's context, so two services
 * in one process (tests) each have their own.
 */
const gateways = new WeakMap<ServiceContext, RuntimeaGateway>();

export function runtimeaGateway(ctx: ServiceContext): RuntimeaGateway {
  let gateway = gateways.get(ctx);
  if (!gateway) {
    gateway = new RuntimeaGateway(ctx);
    gateways.set(ctx, gateway);
  }
  return gateway;
}
