'use strict';

const { computeTotal, validateCart, formatPrice } = require('./util');

/**
 * HTTP handler: price the posted cart and answer with the formatted total.
 */
function handleCheckout(req, res) {
  validateCart(req.body);
  const total = computeTotal(req.body.items);
  res.json({ total: formatPrice(total, req.body.currency) });
}

/**
 * HTTP handler: answer with the cart's item count.
 */
function handleCount(req, res) {
  validateCart(req.body);
  res.json({ count: req.body.items.length });
}

module.exports = { handleCheckout, handleCount };
