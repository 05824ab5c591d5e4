'use strict';

/**
 * Sum price times quantity over the items of a cart.
 */
function computeTotal(items) {
  let total = 0;
  for (const item of items) {
    total += item.price * item.quantity;
  }
  return Math.round(total * 100) / 100;
}

/**
 * Reject carts without items or with negative quantities.
 */
function validateCart(cart) {
  if (!cart || !Array.isArray(cart.items) || cart.items.length === 0) {
    throw new Error('cart is empty');
  }
  for (const item of cart.items) {
    if (item.quantity < 0) {
      throw new Error('negative quantity for ' + item.sku);
    }
  }
  return true;
}

/**
 * Show an amount of money with two decimals and a currency sign.
 */
function formatPrice(amount, currency) {
  return (currency === 'EUR' ? '€' : '$') + amount.toFixed(2);
}

module.exports = { computeTotal, validateCart, formatPrice };
