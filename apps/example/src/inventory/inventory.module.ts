import { Module } from '@nestjs/common';
import { InventoryApi, RequestQuote, Restock, SyncInventory } from './inventory.workflows';

@Module({ providers: [InventoryApi, SyncInventory, RequestQuote, Restock] })
export class InventoryModule {}
