import { Router } from 'express';
import { HttpError } from '../errors.js';
import type { Budgets } from './budgets.js';
import { budgetId, parseBudget } from './spec.js';

/** What the budgets routes read: the budgets the composition root builds. */
export type BudgetsDeps = { readonly budgets: Budgets };

/** GET /api/budgets, PUT and DELETE /api/budgets/{id} (beyond the spec; docs/limits.md). */
export function budgetsRoutes(ctx: BudgetsDeps): Router {
  const router = Router();
  router.get('/api/budgets', async (_req, res) => {
    res.json({ budgets: await ctx.budgets.list() });
  });
  router.put('/api/budgets/:id', async (req, res) => {
    const id = budgetId(req.params.id);
    res.json(await ctx.budgets.put(id, parseBudget(req.body)));
  });
  router.delete('/api/budgets/:id', async (req, res) => {
    if (!(await ctx.budgets.delete(budgetId(req.params.id)))) throw new HttpError(404, 'Budget not found');
    res.json({ ok: true });
  });
  return router;
}
