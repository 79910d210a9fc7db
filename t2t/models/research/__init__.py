"""Research models with T2T 1.15.7's module paths (`tensor2tensor.models.research`)."""
